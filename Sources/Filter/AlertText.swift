import PushCore

/// The human-readable texts of a payload that the filter scans, what a user sees: the texts its provider's module
/// names (`ProviderDescription.alertTexts`), or for the common Android shape (China's vendors) `notification.title`
/// and `.body`, every string of the vendor's own object, and the configured keys in `data`. The payload is read with
/// the worker's strict JSON reader (it was validated when the message was claimed).
public enum AlertText {
    public static func texts(inPayload payload: [UInt8], extraFields: [String], provider: PushProvider = .default) -> [String] {
        guard let root = try? JSONParser.parse(payload), root.objectMembers != nil else { return [] }
        if let alertTexts = provider.ownAlertTexts { return alertTexts(root, extraFields) }
        // Without rules of its own, a provider's message takes the common Android shape: China's vendors
        // (docs/vendors.md). The common `notification`, the configured keys of `data`, and every string of the
        // vendor's own object, which goes into its request as it is (a title set there is what the device shows).
        var texts: [String] = []
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
}
