extension EmulatorConfiguration {
    /// The Huawei Push Kit side's settings (v1 OAuth and sends, v3 PS256 JWT sends). Defaults: no app configured
    /// (every send is refused as Huawei refuses an unknown app), no faults.
    public struct HuaweiSettings: EmulatedServiceSettings {
        public var apps: [HuaweiApp] = []
        public var serviceAccounts: [HuaweiServiceAccount] = []
        /// Where the OAuth 2.0 token endpoint answers (Huawei's current path, and the older one).
        public var tokenPaths = ["/oauth2/v3/token", "/oauth2/v2/token"]
        /// The `aud` a v3 JWT must carry (also accepted: this emulator's own token URL as the request reached it).
        public var jwtAudience = "https://oauth-login.cloud.huawei.com/oauth2/v3/token"
        /// `expires_in` of the access tokens issued (Huawei: 3600).
        public var accessTokenLifetimeSeconds: Int64 = 3600
        public var tokenAnswers = VendorTokenAnswer.huaweiDefaults
        /// See `EmulatorConfiguration.receiptDeadPrefixes`: Huawei's receipts give them status 2 (uninstalled).
        public var receiptDeadPrefixes = EmulatorConfiguration.receiptDeadPrefixes
        /// Flow control (HTTP 503: "distribute the sending speed evenly"), requests or tokens per second per app
        /// (Huawei counts devices; over either: 503), latency.
        public var faults = VendorFaults()
        public init() {}
    }

    /// The Huawei side's settings, kept in `serviceSettings` (the configuration has no property per vendor).
    public var huawei: HuaweiSettings {
        get { serviceSettings[HuaweiSettings.self] }
        set { serviceSettings[HuaweiSettings.self] = newValue }
    }
}
