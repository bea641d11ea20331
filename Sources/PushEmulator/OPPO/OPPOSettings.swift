extension EmulatorConfiguration {
    /// An OPPO app: its AppKey and MasterSecret (the auth sign's), and how many non-chat messages it may send a day.
    public struct OPPOApp: Sendable {
        public var appKey: String
        public var masterSecret: String
        /// Messages of a class other than `IM` (marketing) the app may send per OPPO day; then code 33. Nil: no quota.
        public var dailyQuota: Int?
        public init(appKey: String, masterSecret: String, dailyQuota: Int? = nil) {
            self.appKey = appKey
            self.masterSecret = masterSecret
            self.dailyQuota = dailyQuota
        }
    }

    /// The OPPO Push side's settings (`/server/v1/auth`, `/server/v1/message/notification/unicast` and
    /// `unicast_batch`). Defaults: no app, no faults.
    public struct OPPOSettings: EmulatedServiceSettings {
        public var apps: [OPPOApp] = []
        /// regIds starting with one of these are invalid (code 10000).
        public var invalidPrefixes = ["unregistered", "invalid", "badtoken"]
        /// The categories OPPO knows; another is refused with code 67.
        public var categories: Set<String> = ["IM", "ACCOUNT", "TODO", "DEVICE_REMINDER", "ORDER", "SUBSCRIPTION", "NEWS", "CONTENT",
                                              "MARKETING", "SOCIAL"]
        /// Flow control (code -2 for every send), requests per second per app (over it: -2), latency.
        public var faults = VendorFaults()
        public init() {}
    }

    public var oppo: OPPOSettings {
        get { serviceSettings[OPPOSettings.self] }
        set { serviceSettings[OPPOSettings.self] = newValue }
    }
}
