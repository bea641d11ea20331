extension EmulatorConfiguration {
    /// A Huawei Android app (Push Kit v1): its OAuth 2.0 client id (also the `/v1/<app_id>/` of the send path)
    /// and client secret.
    public struct HuaweiApp: Sendable {
        public var appID: String
        public var clientSecret: String
        /// Granted the right to send `android.urgency: HIGH` (without it: 80300011).
        public var highPriorityRight: Bool
        /// Where this app's receipts go (`HuaweiReceipts`); nil: none are sent.
        public var receipts: ReceiptTarget?
        public init(appID: String, clientSecret: String, highPriorityRight: Bool = false, receipts: ReceiptTarget? = nil) {
            self.appID = appID
            self.clientSecret = clientSecret
            self.highPriorityRight = highPriorityRight
            self.receipts = receipts
        }
    }
}
