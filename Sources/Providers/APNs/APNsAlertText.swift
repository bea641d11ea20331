import PushCore

/// The texts of an APNs payload that the word filter scans, what the user sees (`ProviderDescription.alertTexts`):
/// `aps.alert` (a string, or its title, subtitle and body, and the arguments a localized alert shows in their place)
/// and the configured keys (`filter.fields`), as dot paths from the payload's root (`data.preview`).
enum APNsAlertText {
    /// Arguments a localized alert puts into its format string on the device: the user reads them as much as a
    /// title or a body, so a word the filter would catch there could otherwise travel in them.
    static let locArgs = ["title-loc-args", "subtitle-loc-args", "loc-args"]

    static func texts(in root: JSONValue, extraFields: [String]) -> [String] {
        var texts: [String] = []
        if let alert = root["aps"]?["alert"] {
            if let text = alert.stringValue {
                texts.append(text)
            } else {
                for key in ["title", "subtitle", "body"] {
                    if let text = alert[key]?.stringValue { texts.append(text) }
                }
                for key in locArgs { alert[key]?.appendStrings(to: &texts) }
            }
        }
        for path in extraFields {
            root.value(at: path.split(separator: ".").map(String.init))?.appendStrings(to: &texts)
        }
        return texts
    }
}
