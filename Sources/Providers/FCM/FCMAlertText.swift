import PushCore

/// The texts of an FCM payload the word filter scans (docs/filter.md): `notification.title` and `.body`,
/// `android.notification.title` and `.body` and its `*_loc_args`, and the configured keys (`filter.fields`)
/// looked up in `data` and in `android.data` (`preview` is `data.preview` and `android.data.preview`).
enum FCMAlertText {
    /// The localized alert's arguments, in both spellings FCM's JSON accepts (the proto field name and its
    /// lowerCamelCase form): the user reads them as much as a title or a body.
    static let locArgs = ["title_loc_args", "titleLocArgs", "body_loc_args", "bodyLocArgs"]

    static func texts(in root: JSONValue, extraFields: [String]) -> [String] {
        var texts: [String] = []
        for notification in [root["notification"], root["android"]?["notification"]] {
            for key in ["title", "body"] {
                if let text = notification?[key]?.stringValue { texts.append(text) }
            }
        }
        for key in locArgs { collect(root["android"]?["notification"]?[key], into: &texts) }
        // `android.data` is the data an Android device gets (it replaces `data` there): both are read.
        for path in extraFields {
            var keys = path.split(separator: ".").map(String.init)
            if keys.first == "data" { keys.removeFirst() }
            collect(value(at: ["data"] + keys, in: root), into: &texts)
            collect(value(at: ["android", "data"] + keys, in: root), into: &texts)
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
