import Foundation

/// The human-readable texts of a payload that the filter scans: `aps.alert` (a string, or its title,
/// subtitle and body) and any configured custom keys, given as dot paths (`data.preview`).
public enum AlertText {
    public static func texts(inPayload payload: [UInt8], extraFields: [String]) -> [String] {
        guard let root = (try? JSONSerialization.jsonObject(with: Data(payload))) as? [String: Any] else { return [] }
        var texts: [String] = []
        if let aps = root["aps"] as? [String: Any] {
            if let alert = aps["alert"] as? String {
                texts.append(alert)
            } else if let alert = aps["alert"] as? [String: Any] {
                for key in ["title", "subtitle", "body"] {
                    if let text = alert[key] as? String { texts.append(text) }
                }
            }
        }
        for path in extraFields {
            collect(value(at: path.split(separator: ".").map(String.init), in: root), into: &texts)
        }
        return texts
    }

    private static func value(at path: [String], in root: [String: Any]) -> Any? {
        var node: Any = root
        for key in path {
            guard let map = node as? [String: Any], let child = map[key] else { return nil }
            node = child
        }
        return node
    }

    private static func collect(_ value: Any?, into texts: inout [String]) {
        switch value {
        case let text as String: texts.append(text)
        case let list as [Any]: list.forEach { collect($0, into: &texts) }
        case let map as [String: Any]: map.values.forEach { collect($0, into: &texts) }
        default: break
        }
    }
}
