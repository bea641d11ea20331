extension EmulatorConfiguration {
    /// An Honor app: its app id (the send path's `{appId}`) and its OAuth client (id and secret).
    public struct HonorApp: Sendable {
        public var appID: String
        public var clientID: String
        public var clientSecret: String
        public init(appID: String, clientID: String, clientSecret: String) {
            self.appID = appID
            self.clientID = clientID
            self.clientSecret = clientSecret
        }
    }

    /// The Honor Push side's settings (`POST /auth/token`, `POST /api/v1/<appId>/sendMessage`). Defaults: no app
    /// (every send refused as for an unknown app), no faults.
    public struct HonorSettings: EmulatedServiceSettings {
        public var apps: [HonorApp] = []
        /// `expires_in` of the access tokens issued (3,600 s, the figure senders report).
        public var accessTokenLifetimeSeconds: Int64 = 3600
        /// Tokens starting with one of these come back in `expireTokens` (dead), and with one of `failPrefixes` in
        /// `failTokens` (failed for no stated reason); the rest are delivered.
        public var expirePrefixes = ["unregistered", "invalid", "expired", "badtoken"]
        public var failPrefixes = ["failtoken"]
        /// Flow control (HTTP 503), tokens per second per app (over it: code 429), latency.
        public var faults = VendorFaults()
        public init() {}
    }

    public var honor: HonorSettings {
        get { serviceSettings[HonorSettings.self] }
        set { serviceSettings[HonorSettings.self] = newValue }
    }
}
