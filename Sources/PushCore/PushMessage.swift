/// `kind` of docs/message-format.md: group and system messages are candidates for merging.
public enum MessageKind: String, Sendable, CaseIterable {
    case `private`, group, system
}

/// Everything a request depends on besides the payload: the default provider's request headers (docs/transport.md),
/// or for another provider what its rules took from the message (they may already have mapped some of it into the
/// payload). Messages merge only when these are identical.
public struct PushHeaders: Sendable, Hashable {
    /// The topic as sent: for the default provider with the push type's suffix (e.g. `.voip`); for another, the
    /// app's name as given.
    public var topic: String
    /// The bundle id the producer named; selects the app's credentials (for a module: the app of `<name>.apps`).
    public var appTopic: String
    /// `push_type`; empty for a provider whose messages have none.
    public var pushType: String
    /// `priority` (default 10), which a provider's rules may already have mapped into the payload.
    public var priority: Int
    /// Absolute UNIX seconds; 0 means "try once, do not store"; nil (the producer gave none) sends no expiration at
    /// all, so the service keeps the push for an offline device by its own policy. For a service with a time to
    /// live, it becomes that, counted when the request is made (the seconds left then).
    public var expiration: Int64?
    /// `collapse_id`: what the service's request carries as its collapse key.
    public var collapseID: String?
    public var provider: PushProvider

    public init(topic: String, appTopic: String, pushType: String, priority: Int, expiration: Int64?, collapseID: String?,
                provider: PushProvider = .default) {
        self.topic = topic
        self.appTopic = appTopic
        self.pushType = pushType
        self.priority = priority
        self.expiration = expiration
        self.collapseID = collapseID
        self.provider = provider
    }

    /// True once the expiration time has passed: such a notification is never sent (again).
    public func isExpired(nowSeconds: Int64) -> Bool {
        guard let expiration, expiration != 0 else { return false }
        return expiration < nowSeconds
    }

    /// Whether the request's content depends on the time it is sent (a nonzero expiration: a time to live counts down).
    public var expiresAtATime: Bool { (expiration ?? 0) != 0 }

    /// `==`, with both sides borrowed: `==` on a value read from a class's property copied it first, a retain and
    /// a release of the topic strings that every message of an app shares (their counts, written from every
    /// thread, are the expensive part). Compares every field, as `==` does; a test holds the two together.
    public static func same(_ a: borrowing PushHeaders, _ b: borrowing PushHeaders) -> Bool {
        a.priority == b.priority && a.expiration == b.expiration && a.provider == b.provider && a.topic == b.topic
            && a.pushType == b.pushType && a.appTopic == b.appTopic && a.collapseID == b.collapseID
    }
}

/// A validated message, as claimed from the queue.
public struct PushMessage: Sendable {
    /// Pipeline-local sequence number: how results find their way back to this message.
    public var seq: UInt64
    public var id: String
    public var kind: MessageKind
    public var uuid: String?
    public var headers: PushHeaders
    /// The payload serialized once, with sorted keys, exactly as it is sent.
    public var payload: [UInt8]
    /// Tokens in lowercase hex, in the producer's order, without the ones that failed validation.
    public var tokens: [String]
    public var enqueuedAtMillis: Int64?

    public init(seq: UInt64, id: String, kind: MessageKind, uuid: String?, headers: PushHeaders,
                payload: [UInt8], tokens: [String], enqueuedAtMillis: Int64?) {
        self.seq = seq
        self.id = id
        self.kind = kind
        self.uuid = uuid
        self.headers = headers
        self.payload = payload
        self.tokens = tokens
        self.enqueuedAtMillis = enqueuedAtMillis
    }
}
