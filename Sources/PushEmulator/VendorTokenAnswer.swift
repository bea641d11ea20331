extension EmulatorConfiguration {
    /// Tokens starting with `prefix` (case-sensitive) are refused with `reason`: the reason a vendor's answer names
    /// (or only a label, for a vendor that lists refused tokens without one). Each side has its defaults, in its folder.
    public struct VendorTokenAnswer: Sendable, Equatable {
        public var prefix: String
        public var reason: String
        public init(prefix: String, reason: String) {
            self.prefix = prefix
            self.reason = reason
        }
    }

    /// Tokens starting with one of these are accepted when sent (as the vendors accept a token whose app is gone), and
    /// their receipts say so, each side in its vendor's words (its status for an uninstalled app).
    public static let receiptDeadPrefixes = ["uninstalled"]
}
