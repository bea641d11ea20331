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
        for key in locArgs { root["android"]?["notification"]?[key]?.appendStrings(to: &texts) }
        // `android.data` is the data an Android device gets (it replaces `data` there): both are read.
        for path in extraFields {
            var keys = path.split(separator: ".").map(String.init)
            if keys.first == "data" { keys.removeFirst() }
            root.value(at: ["data"] + keys)?.appendStrings(to: &texts)
            root.value(at: ["android", "data"] + keys)?.appendStrings(to: &texts)
        }
        return texts
    }
}
