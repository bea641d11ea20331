/// A queue element for a provider module that reads its messages with rules of its own (`ProviderDescription.parse`:
/// the default provider's, Firebase's), after the fields every message has (`id`, `kind`, `uuid`, `topic`) were checked:
/// the module's rules read the rest through this, with the same checks and error texts as every provider's.
public struct ProviderElement {
    /// The limits the element is read under (its depth).
    public let limits: MessageLimits
    let fields: MessageFields
    public let provider: PushProvider
    public let id: String
    public let kind: MessageKind
    public let uuid: String?
    public let topic: String
    /// The pipeline's sequence number for the message.
    public let seq: UInt64
    /// The time of the parse, UNIX seconds.
    public let now: Int64
    let raw: [UInt8]

    init(limits: MessageLimits, fields: MessageFields, provider: PushProvider, id: String, kind: MessageKind, uuid: String?,
         topic: String, seq: UInt64, now: Int64, raw: [UInt8]) {
        self.limits = limits
        self.fields = fields
        self.provider = provider
        self.id = id
        self.kind = kind
        self.uuid = uuid
        self.topic = topic
        self.seq = seq
        self.now = now
        self.raw = raw
    }

    /// `payload` as given (a tree, or nil when absent).
    public var payload: JSONValue? { fields.payload }

    /// Whether the element has a `push_type` (a field of the default provider's messages only: other rules refuse it).
    public var namesPushType: Bool { fields.pushType != nil }

    /// The payload's canonical bytes when the reader kept them without a tree (as the producer wrote them, or
    /// sorted when only the members' order differed); nil when the payload was read as a tree.
    public var keptPayload: [UInt8]? { fields.keptPayload(raw: raw) }

    /// The payload's members, in the producer's order: read from the producer's bytes when they were kept
    /// (`keptPayload`, given here so as not to copy them twice), else the tree's. `payload is missing` or `not a
    /// JSON object` otherwise.
    public func payloadMembers(kept: [UInt8]?) throws(MessageParser.Problem) -> [JSONMember] {
        guard let payloadValue = fields.payload else { throw MessageParser.Problem("payload is missing") }
        guard let given = payloadValue.objectMembers else { throw MessageParser.Problem("payload is not a JSON object") }
        guard let kept else { return given }
        guard let members = fields.keptPayloadMembers(raw: raw, kept: kept, maxDepth: limits.maxDepth) else {
            throw MessageParser.Problem("payload is not a JSON object")
        }
        return members
    }

    /// `push_type` as given (nil when absent).
    public var pushType: JSONValue? { fields.pushType }

    /// Whether the payload has a member `probe.key` that is an object of the one member `probe.member`; read from
    /// the producer's bytes when they were kept, without a tree.
    public func payloadMemberHasOnly(_ probe: PayloadMemberProbe) -> Bool {
        if let canonical = fields.canonicalPayload { return CanonicalJSON.memberHasOnly(raw, object: canonical, probe) }
        if let sorted = fields.sortedPayload { return CanonicalJSON.memberHasOnly(sorted, object: 0..<sorted.count, probe) }
        guard let inner = fields.payload?[probe.key]?.objectMembers else { return false }
        return inner.count == 1 && inner[0].key == probe.member
    }

    /// `priority` (10, 5 or 1) if given.
    public func priority() throws(MessageParser.Problem) -> Int? {
        guard let value = fields.priority else { return nil }
        return try MessageParser.priority(value)
    }

    /// `expiration` as absolute UNIX seconds if given (0: deliver now or drop).
    public func expiration() throws(MessageParser.Problem) -> Int64? {
        guard let value = fields.expiration else { return nil }
        return try MessageParser.expiration(value, now: now) ?? 0
    }

    /// `collapse_id` if given.
    public func collapseID() throws(MessageParser.Problem) -> String? { try MessageParser.collapseID(fields.collapseID) }

    /// `enqueued_at` (UNIX milliseconds) if given.
    public func enqueuedAt() throws(MessageParser.Problem) -> Int64? { try MessageParser.enqueuedAt(fields.enqueuedAt) }

    /// The producer's tokens that `isValid` accepts, kept as written, each listed once, and those it refuses (they
    /// go to feedback); none accepted is the producer's error, `tokens[i] is not <notA>`.
    public func tokens(notA: StaticString, isValid: (String) -> Bool) throws(MessageParser.Problem) -> (tokens: [String], rejected: [String]) {
        let strings = try MessageParser.tokenStrings(fields)
        if strings.count == 1, isValid(strings[0]) { return (strings, []) }
        return try MessageParser.sortTokens(strings, notA: notA) { isValid($0) ? $0 : nil }
    }

    /// The producer's tokens in the service's form (`normalize`: nil for what is not a token), each listed once,
    /// and those that are not tokens (they go to feedback); none a token is the producer's error.
    public func tokens(notA: StaticString, normalize: (String) -> String?) throws(MessageParser.Problem) -> (tokens: [String], rejected: [String]) {
        let strings = try MessageParser.tokenStrings(fields)
        // One token already in the service's form (most messages): the producer's list is the list.
        if strings.count == 1, let token = normalize(strings[0]), token == strings[0] { return (strings, []) }
        return try MessageParser.sortTokens(strings, notA: notA, normalize: normalize)
    }

    /// The valid message of this element: `headers` and the payload as the module made them.
    public func valid(headers: PushHeaders, payload: [UInt8], tokens: [String], rejected: [String],
                      enqueuedAtMillis: Int64?) -> ParsedElement {
        .valid(PushMessage(seq: seq, id: id, kind: kind, uuid: uuid, headers: headers, payload: payload, tokens: tokens,
                           enqueuedAtMillis: enqueuedAtMillis), rejectedTokens: rejected)
    }
}

/// A provider module's own rules for reading its messages (`ProviderDescription.parse`). A protocol rather than a
/// closure: the parser calls the default provider's for nearly every message, and a closure kept in the registry
/// reached it through layers of reabstraction thunks, each passing the element on (a quarter more CPU per parse,
/// `scripts/bench.sh --stages`); a witness call passes it once.
public protocol ProviderMessageRules: Sendable {
    func parse(_ element: ProviderElement) throws(MessageParser.Problem) -> ParsedElement
}

/// What `ProviderElement.payloadMemberHasOnly` looks for: a payload member `key` whose value is an object of the one
/// member `member`, both plain names (nothing JSON escapes: they are compared as the bytes of a canonical payload).
/// Made once (its bytes are what the scan compares), not per message.
public struct PayloadMemberProbe: Sendable {
    public let key: String
    public let member: String
    let keyBytes: [UInt8]
    let onlyMemberBytes: [UInt8]

    public init(key: String, member: String) {
        self.key = key
        self.member = member
        keyBytes = Array("\"\(key)\":".utf8)
        onlyMemberBytes = Array("{\"\(member)\":".utf8)
    }
}
