/// What one queue element turned out to be.
public enum ParsedElement: Sendable {
    /// A message to push. `rejectedTokens` are the producer's tokens that are not tokens of its provider (for the
    /// default provider neither hex nor Base64): they go to feedback as `BadDeviceToken` while the rest are sent.
    case valid(PushMessage, rejectedTokens: [String])
    /// The element cannot be pushed; `reason` names the field and the problem (it becomes the dead
    /// letter's reason). `messageID` is the producer's id when the element had a usable one, for logs.
    case invalid(reason: String, messageID: String?)
}

/// Limits on one queue element (docs/message-format.md, plus what keeps a worker safe from hostile input).
public struct MessageLimits: Sendable, Equatable {
    /// A larger element is dead-lettered without being parsed (`collector.max_element_bytes`).
    public var maxElementBytes = 1_048_576
    /// Arrays and objects nested deeper than this are rejected (real payloads nest a few levels).
    public var maxDepth = JSONParser.defaultMaxDepth
    public init() {}

    public static let maxTokens = 10_000
    public static let maxIDScalars = 128
    /// A bundle id is at most 155 characters; a push type suffix adds at most 23.
    public static let maxTopicBytes = 255
    public static let maxCollapseIDBytes = 64
    public static let maxUUIDBytes = 256
    /// UNIX seconds, 32 bits (until 2106): what a request's expiration header can say, and far from any overflow.
    public static let maxExpiration: Int64 = 4_294_967_295
    /// UNIX milliseconds up to 2^53, so latency arithmetic on it cannot overflow.
    public static let maxEnqueuedAtMillis: Int64 = 9_007_199_254_740_992
}

/// Validates queue elements against docs/message-format.md. Every conversion is checked: no element, however
/// crafted, can trap, hang or exhaust the worker; each rejection names the field and the problem.
public struct MessageParser: Sendable {
    public static let maxTokens = MessageLimits.maxTokens
    /// Up to this many tokens, one listed twice is found by comparing with each earlier one.
    static let linearTokenScanLimit = 16

    public let limits: MessageLimits
    /// Whether plain elements are read field by field (`MessageFieldReader`) rather than as a tree. Both give
    /// the same result for every element; false is for comparing the two (tests, the fuzzer).
    public let readsFieldsDirectly: Bool
    /// The default provider's rules for its messages (nearly every message), taken from the registry once, here,
    /// rather than per message; nil if its module had not registered yet when this parser was made.
    private let defaultRules: (any ProviderMessageRules)?

    public init(limits: MessageLimits = MessageLimits(), readsFieldsDirectly: Bool = true) {
        self.limits = limits
        self.readsFieldsDirectly = readsFieldsDirectly
        defaultRules = PushProvider.default.ownMessageRules
    }

    /// - Parameter now: UNIX seconds, used for relative (`"+N"`) and past expirations.
    public func parse(_ raw: [UInt8], seq: UInt64, now: Int64) -> ParsedElement {
        guard raw.count <= limits.maxElementBytes else {
            return .invalid(reason: "Malformed: element is \(raw.count) bytes, over the \(limits.maxElementBytes)-byte limit",
                            messageID: nil)
        }
        let fields: MessageFields
        if readsFieldsDirectly, let read = MessageFieldReader.read(raw, maxDepth: limits.maxDepth) {
            fields = read
        } else {
            let root: JSONValue
            let canonicalPayload: Range<Int>?
            do {
                // A payload already in canonical form is kept as the producer's bytes, with no tree to build,
                // write and free (a third of parsing a one-token message).
                (root, canonicalPayload) = try JSONParser.parse(raw, maxDepth: limits.maxDepth, keepingCanonical: "payload")
            } catch {
                return .invalid(reason: "Malformed: not JSON (\(error.description))", messageID: nil)
            }
            guard let members = root.objectMembers else {
                return .invalid(reason: "Malformed: not a JSON object", messageID: nil)
            }
            fields = MessageFields(members, canonicalPayload: canonicalPayload)
        }
        // The fields go on to the provider's rules by move, not by copy (a copy retained and released each of them).
        let idValue = fields.id
        do {
            // Few elements name a provider: they take a path of their own, out of line, which leaves the default
            // provider's as short as it can be (a branch for it there cost every message about 4%: scripts/bench.sh
            // --stages).
            if _slowPath(fields.namesProvider) { return try parseNamingProvider(consume fields, seq: seq, now: now, raw: raw) }
            return try parseDefault(consume fields, seq: seq, now: now, raw: raw)
        } catch {
            return .invalid(reason: error.reason, messageID: usableID(idValue))
        }
    }

    /// The id if it is valid, for naming an otherwise invalid message in logs.
    private func usableID(_ value: JSONValue?) -> String? {
        guard let text = value?.stringValue, (try? checkID(text)) != nil else { return nil }
        return text
    }

    /// Why an element cannot be pushed: `Malformed: <what is wrong>`, or a reason of its own (`Expired`).
    public struct Problem: Error {
        public let reason: String
        public init(_ text: String) { reason = "Malformed: \(text)" }
        public init(reason: String) { self.reason = reason }
    }

    private func checkID(_ id: String) throws(Problem) {
        // Ids are nearly always short ASCII: checked byte by byte without decoding scalars.
        let asciiVerdict: Bool? = id.utf8.withContiguousStorageIfAvailable { bytes in
            guard bytes.allSatisfy({ $0 < 0x80 }) else { return nil }
            return bytes.count >= 1 && bytes.count <= MessageLimits.maxIDScalars && !bytes.contains(where: { $0 < 0x20 || $0 == 0x7F })
        } ?? nil
        if asciiVerdict == true { return }
        let scalars = id.unicodeScalars.count
        guard scalars >= 1, scalars <= MessageLimits.maxIDScalars else {
            throw Problem("id must be 1..\(MessageLimits.maxIDScalars) characters")
        }
        guard !id.unicodeScalars.contains(where: Self.isControl) else {
            throw Problem("id contains a control character")
        }
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F..<0xA0).contains(scalar.value) || scalar.value == 0x2028 || scalar.value == 0x2029
    }

    /// The fields every message has, whatever its provider, checked in this order.
    @inline(__always)
    private func commonFields(_ fields: MessageFields) throws(Problem) -> (id: String, kind: MessageKind, uuid: String?, topic: String) {
        guard let idValue = fields.id else { throw Problem("id is missing") }
        guard let id = idValue.stringValue else { throw Problem("id is not a string") }
        try checkID(id)

        var kind = MessageKind.private
        if let value = fields.kind {
            guard let text = value.stringValue, let parsed = MessageKind(rawValue: text) else {
                throw Problem("kind must be \"private\", \"group\" or \"system\"")
            }
            kind = parsed
        }
        var uuid: String?
        if let value = fields.uuid {
            guard let text = value.stringValue else { throw Problem("uuid is not a string") }
            guard text.utf8.count <= MessageLimits.maxUUIDBytes else {
                throw Problem("uuid is \(text.utf8.count) bytes, over \(MessageLimits.maxUUIDBytes)")
            }
            uuid = text
        }
        guard let topicValue = fields.topic else { throw Problem("topic is missing") }
        guard let topic = topicValue.stringValue, !topic.isEmpty else { throw Problem("topic must be a non-empty bundle id") }
        try HeaderValue.check(topic, field: "topic", maxBytes: MessageLimits.maxTopicBytes, allowSpace: false)
        return (id, kind, uuid, topic)
    }

    /// A message without `provider`: the default provider's rules read it.
    private func parseDefault(_ fields: consuming MessageFields, seq: UInt64, now: Int64, raw: [UInt8]) throws(Problem) -> ParsedElement {
        let (id, kind, uuid, topic) = try commonFields(fields)
        // A parser made before the module registered (a test's property) asks the registry, once per message.
        guard let rules = defaultRules ?? PushProvider.default.ownMessageRules else {
            fatalError("the default provider's module is not registered: register the providers (PushProvider.registerDefault) before reading a message")
        }
        return try rules.parse(ProviderElement(limits: limits, fields: fields, provider: .default, id: id, kind: kind, uuid: uuid,
                                                topic: topic, seq: seq, now: now, raw: raw))
    }

    @inline(never)
    private func parseNamingProvider(_ fields: consuming MessageFields, seq: UInt64, now: Int64, raw: [UInt8]) throws(Problem) -> ParsedElement {
        let (id, kind, uuid, topic) = try commonFields(fields)
        let provider = try provider(fields)
        if let rules = provider.ownMessageRules {
            return try rules.parse(ProviderElement(limits: limits, fields: fields, provider: provider, id: id, kind: kind, uuid: uuid,
                                             topic: topic, seq: seq, now: now, raw: raw))
        }
        guard let rules = provider.vendorRules else { throw Problem("provider \"\(provider.rawValue)\" has no message rules") }
        return try parseVendor(fields, provider: provider, rules: rules, id: id, kind: kind, uuid: uuid, topic: topic,
                               seq: seq, now: now, raw: raw)
    }

    /// The producer's tokens in the provider's form (`normalize`), each listed once, and those that are not a
    /// token at all. One bad token among good ones is the device's problem (feedback); no good token at all is
    /// the producer's: `Malformed: tokens[i] is not <notA>`. Inlined with each provider's `normalize`.
    @inline(__always)
    static func sortTokens(_ strings: [String], notA: StaticString, normalize: (String) -> String?) throws(Problem)
        -> (tokens: [String], rejected: [String]) {
        var tokens: [String] = []
        tokens.reserveCapacity(strings.count)
        var rejected: [String] = []
        var firstRejected: Int?
        var seen = Set<String>()
        for (index, text) in strings.enumerated() {
            if let token = normalize(text) {
                // A token listed twice is sent once.
                // Comparing with the few tokens before costs less than hashing; a set beyond that.
                if strings.count > linearTokenScanLimit {
                    guard seen.insert(token).inserted else { continue }
                } else if tokens.contains(token) {
                    continue
                }
                tokens.append(token)
            } else {
                rejected.append(text)
                if firstRejected == nil { firstRejected = index }
            }
        }
        if tokens.isEmpty, let index = firstRejected { throw Problem("tokens[\(index)] is not \(notA)") }
        return (tokens, rejected)
    }

    /// The producer's tokens as strings, whichever way the element was read.
    @inline(__always)
    static func tokenStrings(_ fields: MessageFields) throws(Problem) -> [String] {
        if let tokenStrings = fields.tokenStrings {
            try checkTokenCount(tokenStrings.count)
            return tokenStrings
        }
        guard let value = fields.tokens else { throw Problem("tokens is missing") }
        guard let items = value.arrayValue else { throw Problem("tokens is not an array") }
        try checkTokenCount(items.count)  // before the items' types, whose error comes after it
        var texts: [String] = []
        texts.reserveCapacity(items.count)
        for (index, item) in items.enumerated() {
            guard let text = item.stringValue else { throw Problem("tokens[\(index)] is not a string") }
            texts.append(text)
        }
        return texts
    }

    private static func checkTokenCount(_ count: Int) throws(Problem) {
        guard count > 0 else { throw Problem("tokens is empty") }
        guard count <= maxTokens else { throw Problem("tokens has \(count) entries, over \(maxTokens)") }
    }

    private func provider(_ fields: MessageFields) throws(Problem) -> PushProvider {
        guard fields.namesProvider else { return .default }
        guard let provider = fields.provider else {
            throw Problem("provider must be \(PushProvider.namesForErrors)")
        }
        return provider
    }

    @inline(__always)
    static func collapseID(_ value: JSONValue?) throws(Problem) -> String? {
        guard let value else { return nil }
        guard let text = value.stringValue else { throw Problem("collapse_id is not a string") }
        try HeaderValue.check(text, field: "collapse_id", maxBytes: MessageLimits.maxCollapseIDBytes, allowSpace: true)
        return text
    }

    @inline(__always)
    static func enqueuedAt(_ value: JSONValue?) throws(Problem) -> Int64? {
        guard let value else { return nil }
        guard let number = value.exactInteger, number >= 0, number <= MessageLimits.maxEnqueuedAtMillis else {
            throw Problem("enqueued_at must be UNIX milliseconds (a whole number from 0 to 2^53)")
        }
        return number
    }

    /// `priority`: 10, 5 or 1 (what a provider allows of them for a kind of push is its rules').
    @inline(__always)
    static func priority(_ value: JSONValue) throws(Problem) -> Int {
        guard let number = value.exactInteger, [10, 5, 1].contains(number) else {
            throw Problem("priority must be 10, 5 or 1")
        }
        return Int(number)
    }

    @inline(__always)
    static func expiration(_ value: JSONValue?, now: Int64) throws(Problem) -> Int64? {
        guard let value else { return nil }
        let absolute: Int64
        if let text = value.stringValue {
            // Digits only after the "+": Int64("+5") would also take "++5".
            let digits = text.dropFirst()
            guard text.hasPrefix("+"), !digits.isEmpty, digits.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                  let offset = Int64(digits) else {
                throw Problem("expiration string must be \"+N\" (seconds from now)")
            }
            let (sum, overflow) = now.addingReportingOverflow(offset)
            guard !overflow, sum <= MessageLimits.maxExpiration else {
                throw Problem("expiration \"+\(offset)\" is past the largest UNIX time a message can carry (\(MessageLimits.maxExpiration))")
            }
            absolute = sum
        } else {
            guard let number = value.exactInteger, number >= 0 else {
                throw Problem("expiration must be UNIX seconds or \"+N\"")
            }
            guard number <= MessageLimits.maxExpiration else {
                throw Problem("expiration \(number) is past the largest UNIX time a message can carry (\(MessageLimits.maxExpiration))")
            }
            absolute = number
        }
        return absolute
    }
}

/// Values that become HTTP request headers. Only visible ASCII gets through, so no value can end a
/// header line early (CR/LF injection), smuggle a NUL, or carry bytes an HTTP/2 peer would reject.
enum HeaderValue {
    static func check(_ text: String, field: String, maxBytes: Int, allowSpace: Bool) throws(MessageParser.Problem) {
        let bytes = text.utf8
        guard bytes.count <= maxBytes else { throw MessageParser.Problem("\(field) is \(bytes.count) bytes, over \(maxBytes)") }
        // The common case, read from the string's contiguous bytes (iterating its UTF-8 view costs several times
        // more per byte); any doubt falls through to the loop below, which names the offending byte.
        let clean = bytes.withContiguousStorageIfAvailable { buffer in
            buffer.allSatisfy { $0 >= 0x21 && $0 <= 0x7E }
        }
        if clean == true { return }
        for byte in bytes {
            let visible = byte >= 0x21 && byte <= 0x7E
            guard visible || (allowSpace && byte == 0x20) else {
                throw MessageParser.Problem("\(field) must be visible ASCII (byte 0x\(String(byte, radix: 16)) is not allowed)")
            }
        }
        if allowSpace, bytes.first == 0x20 || bytes.last == 0x20 {
            throw MessageParser.Problem("\(field) must not start or end with a space")
        }
    }
}
