/// One device's report from a push service: which app (the configured topic whose secret proved the request), which
/// token, what happened, and the message it is about.
public struct Receipt: Sendable, Equatable {
    /// The app's topic (never read from the body alone: the app whose secret proved the request).
    public var app: String
    public var token: String
    public var status: ReceiptStatus
    /// The id of the message the report is about, as our request tagged it (or the service's own id without a tag):
    /// with the token and the app, what makes a resent report the same report.
    public var messageID: String
    /// The service's own time of the report (UNIX ms), nil when it gave none.
    public var timestampMillis: Int64?

    public init(app: String, token: String, status: ReceiptStatus, messageID: String, timestampMillis: Int64? = nil) {
        self.app = app
        self.token = token
        self.status = status
        self.messageID = messageID
        self.timestampMillis = timestampMillis
    }
}

/// What a receipt says, in a small set shared by every service (the `status` label of `push_receipts_total`): each
/// module maps its own codes onto it.
public enum ReceiptStatus: String, Sendable, CaseIterable {
    case delivered
    case clicked
    /// The token is no longer any use (the app uninstalled, the token invalid): it goes to the feedback list.
    case dead
    /// The service or the device dropped it on purpose (a filter, a condition, a held message).
    case filtered
    /// The user or the app turned notifications off.
    case disabled
    /// The app's quota or a frequency limit was hit.
    case overQuota = "over_quota"
    /// Anything else, counted only.
    case other
}
