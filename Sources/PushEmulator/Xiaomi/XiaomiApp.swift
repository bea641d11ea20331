extension EmulatorConfiguration {
    /// A Xiaomi app: the AppSecret of `Authorization: key=<AppSecret>` and the packages it may name in
    /// `restricted_package_name`.
    public struct XiaomiApp: Sendable {
        public var appSecret: String
        public var packages: [String]
        /// The channel ids registered in the console (`extra.channel_id`); empty: any channel id is accepted.
        public var channels: [String]
        /// Messages (one per regId) the app may send per Xiaomi day; then 10034 until the day rolls over. Nil:
        /// no quota.
        public var dailyQuota: Int?
        /// The private (chat) channels among `channels`: Xiaomi counts no quota for messages on them.
        public var privateChannels: [String]
        public init(appSecret: String, packages: [String], channels: [String] = [], dailyQuota: Int? = nil,
                    privateChannels: [String] = []) {
            self.appSecret = appSecret
            self.packages = packages
            self.channels = channels
            self.dailyQuota = dailyQuota
            self.privateChannels = privateChannels
        }
    }
}
