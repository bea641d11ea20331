extension EmulatorConfiguration {
    /// A Huawei app's receipt callback as registered in its console: the URL, the HMAC secret and the user name the
    /// signature covers.
    public struct ReceiptTarget: Sendable {
        public var url: String
        public var secret: String
        public var userName: String
        public init(url: String, secret: String, userName: String) {
            self.url = url
            self.secret = secret
            self.userName = userName
        }
    }
}
