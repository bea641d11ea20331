extension EmulatorConfiguration {
    /// The Xiaomi MiPush side's settings (`/v3/message/regid`). Defaults: no app configured (every send is refused as
    /// Xiaomi refuses an unknown AppSecret), no faults.
    public struct XiaomiSettings: EmulatedServiceSettings {
        public var apps: [XiaomiApp] = []
        /// When the quota day rolls over: `HH:MM` with a UTC offset. Beijing midnight is assumed, unverified.
        public var quotaReset = "00:00+08:00"
        public var tokenAnswers = VendorTokenAnswer.xiaomiDefaults
        /// See `EmulatorConfiguration.receiptDeadPrefixes`: Xiaomi's receipts report them as type 16 (target invalid).
        public var receiptDeadPrefixes = EmulatorConfiguration.receiptDeadPrefixes
        /// Flow control (HTTP 503), requests per second per app (over it: code 10027), `Retry-After` on the 503
        /// answers, latency.
        public var faults = VendorFaults()
        public init() {}
    }

    /// The Xiaomi side's settings, kept in `serviceSettings` (the configuration has no property per vendor).
    public var xiaomi: XiaomiSettings {
        get { serviceSettings[XiaomiSettings.self] }
        set { serviceSettings[XiaomiSettings.self] = newValue }
    }
}
