import PushCore

/// The human-readable texts of a payload that the filter scans, what a user sees: for APNs `aps.alert` (a
/// string, or its title, subtitle and body) and any configured custom keys, given as dot paths
/// (`data.preview`); for FCM (docs/fcm.md) `notification.title` and `.body`, `android.notification.title`
/// and `.body`, and the configured keys looked up in `data` (`preview` is `data.preview`). The payload is read
/// with the worker's strict JSON reader (it was validated when the message was claimed).
public enum AlertText {
    public static func texts(inPayload payload: [UInt8], extraFields: [String], provider: PushProvider = .apns) -> [String] {
        guard let root = try? JSONParser.parse(payload), root.objectMembers != nil else { return [] }
        var texts: [String] = []
        if provider == .fcm {
            for notification in [root["notification"], root["android"]?["notification"]] {
                for key in ["title", "body"] {
                    if let text = notification?[key]?.stringValue { texts.append(text) }
                }
            }
            for path in extraFields {
                var keys = path.split(separator: ".").map(String.init)
                if keys.first != "data" { keys.insert("data", at: 0) }
                collect(value(at: keys, in: root), into: &texts)
            }
            return texts
        }
        if let alert = root["aps"]?["alert"] {
            if let text = alert.stringValue {
                texts.append(text)
            } else {
                for key in ["title", "subtitle", "body"] {
                    if let text = alert[key]?.stringValue { texts.append(text) }
                }
            }
        }
        for path in extraFields {
            collect(value(at: path.split(separator: ".").map(String.init), in: root), into: &texts)
        }
        return texts
    }

    private static func value(at path: [String], in root: JSONValue) -> JSONValue? {
        var node = root
        for key in path {
            guard let child = node[key] else { return nil }
            node = child
        }
        return node
    }

    private static func collect(_ value: JSONValue?, into texts: inout [String]) {
        switch value {
        case .string(let text)?: texts.append(text)
        case .array(let items)?: items.forEach { collect($0, into: &texts) }
        case .object(let members)?: members.forEach { collect($0.value, into: &texts) }
        default: break
        }
    }
}
