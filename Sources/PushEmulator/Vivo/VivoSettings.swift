extension EmulatorConfiguration {
    /// A vivo app: its AppID, AppKey and AppSecret (the auth sign's), and its daily quotas.
    public struct VivoApp: Sendable {
        public var appID: String
        public var appKey: String
        public var appSecret: String
        /// Messages (one per regId) the app may send per vivo day; then 10070. Nil: no quota.
        public var dailyQuota: Int?
        /// List bodies the app may save per vivo day; then 10252. Nil: no quota.
        public var dailyListBodies: Int?
        public init(appID: String, appKey: String, appSecret: String, dailyQuota: Int? = nil, dailyListBodies: Int? = nil) {
            self.appID = appID
            self.appKey = appKey
            self.appSecret = appSecret
            self.dailyQuota = dailyQuota
            self.dailyListBodies = dailyListBodies
        }
    }

    /// The vivo Push side's settings (`/message/auth`, `/message/send`, `/message/saveListPayload`,
    /// `/message/pushToList`). Defaults: no app, no faults.
    public struct VivoSettings: EmulatedServiceSettings {
        public var apps: [VivoApp] = []
        /// regIds starting with one of these are unknown to the app (`invalidUser(s)` status 1); with one of
        /// `invalidPrefixes`, not valid at all (10302 on a single send, status 1 in a list).
        public var unknownPrefixes = ["unregistered", "uninstalled"]
        public var invalidPrefixes = ["invalid", "badtoken"]
        /// Categories vivo knows with the classification each needs (10096 unknown, 10097 the other classification).
        public var systemCategories: Set<String> = ["IM", "ACCOUNT", "TODO", "DEVICE_REMINDER", "ORDER", "SUBSCRIPTION"]
        public var operationCategories: Set<String> = ["NEWS", "CONTENT", "MARKETING", "SOCIAL"]
        /// Flow control (HTTP 503), requests per second per app (over it: 10250... 503), latency.
        public var faults = VendorFaults()
        public init() {}
    }

    public var vivo: VivoSettings {
        get { serviceSettings[VivoSettings.self] }
        set { serviceSettings[VivoSettings.self] = newValue }
    }
}
