import PushCore

/// The human-readable texts of a payload that the filter scans, what a user sees: for APNs `aps.alert` (a
/// string, or its title, subtitle and body, and the `loc-args` a localized alert shows in its place) and any
/// configured custom keys, given as dot paths (`data.preview`). The payload is read with the worker's strict JSON
/// reader (it was validated when the message was claimed). For a provider module's message: the texts its own
/// rules name (`ProviderDescription.alertTexts`), or for the common Android shape (China's vendors)
/// `notification.title` and `.body`, every string of the vendor's own object, and the configured keys in `data`.
public enum AlertText {
    /// Arguments a localized alert puts into its format string on the device: the user reads them as much as a
    /// title or a body, so a word the filter would catch there could otherwise travel in them.
    static let apnsLocArgs = ["title-loc-args", "subtitle-loc-args", "loc-args"]

    public static func texts(inPayload payload: [UInt8], extraFields: [String], provider: PushProvider = .apns) -> [String] {
        guard let root = try? JSONParser.parse(payload), root.objectMembers != nil else { return [] }
        var texts: [String] = []
        if let alertTexts = provider.ownAlertTexts { return alertTexts(root, extraFields) }
        if provider != .apns {
            // China's Android vendors (docs/vendors.md): the common `notification`, the configured keys of `data`,
            // and every string of the vendor's own object, which goes into its request as it is (a title set
            // there is what the device shows).
            for key in ["title", "body"] {
                if let text = root["notification"]?[key]?.stringValue { texts.append(text) }
            }
            root[provider.rawValue]?.appendStrings(to: &texts)
            for path in extraFields {
                var keys = path.split(separator: ".").map(String.init)
                if keys.first == "data" { keys.removeFirst() }
                root.value(at: ["data"] + keys)?.appendStrings(to: &texts)
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
                for key in apnsLocArgs { alert[key]?.appendStrings(to: &texts) }
            }
        }
        for path in extraFields {
            root.value(at: path.split(separator: ".").map(String.init))?.appendStrings(to: &texts)
        }
        return texts
    }
}
