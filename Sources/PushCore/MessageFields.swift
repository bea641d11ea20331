/// The members of a queue element that docs/message-format.md defines, each the JSON value the producer wrote. Other
/// members are ignored (after being checked as JSON); duplicate keys never get this far (the JSON parser
/// rejects them), so each field here is the only member of its name.
struct MessageFields {
    var id, kind, uuid, topic, tokens, payload, pushType, priority, expiration, collapseID, enqueuedAt: JSONValue?
    /// `provider`, which few elements name: not in `Field`, so that the keys of the others are looked up as
    /// before. Kept as the provider it names (nil for a value that names none) and a flag saying it was given:
    /// for the many elements without one, a flag and a byte cost less to test, copy and free than a JSON value
    /// (testing an optional value for nil was 3% of parsing a one-token message).
    var provider: PushProvider?
    var namesProvider = false
    /// `tokens` when it was read directly as an array of strings (then `tokens` is nil).
    var tokenStrings: [String]?
    /// Where the payload's bytes are when they are already canonical (`payload` is then an empty object).
    var canonicalPayload: Range<Int>?
    /// The payload's canonical bytes when they were canonical but for the order of members, sorted without a
    /// tree (`CanonicalJSON.reorderedObject`; `payload` is then an empty object, `canonicalPayload` nil).
    var sortedPayload: [UInt8]?
    /// Where the producer's bytes of a sorted payload are: its tree is read from them, so that checks meet its
    /// members in the producer's order (and name the same first problem) as when the tree was built by reading.
    var sortedPayloadSource: Range<Int>?

    /// The payload's canonical bytes when the reader kept them (as they were, or sorted); nil when `payload`
    /// holds its tree.
    func keptPayload(raw: [UInt8]) -> [UInt8]? {
        if let sortedPayload { return sortedPayload }
        return canonicalPayload.map { Array(raw[$0]) }
    }

    /// The members of a kept payload (`kept`, from `keptPayload`), in the producer's order: read from `kept`
    /// itself, or for a sorted payload from the producer's bytes, so that checks meet the members as written (and
    /// name the same first problem as a tree read from the element would). Nil when they are not an object.
    func keptPayloadMembers(raw: [UInt8], kept: [UInt8], maxDepth: Int) -> [JSONMember]? {
        let source = sortedPayloadSource.map { Array(raw[$0]) } ?? kept
        return (try? JSONParser.parse(source, maxDepth: maxDepth))?.objectMembers
    }

    init() {}

    static let providerName = "provider"
    static let providerKey = Array(providerName.utf8)

    mutating func setProvider(_ value: JSONValue) {
        provider = value.stringValue.flatMap(PushProvider.init(rawValue:))
        namesProvider = true
    }

    /// The fields by name, shared by both ways of reading an element.
    enum Field: Int {
        case id, kind, uuid, topic, tokens, payload, pushType, priority, expiration, collapseID, enqueuedAt

        static let names: [(field: Field, name: [UInt8])] = {
            let spelled: [(Field, String)] = [
                (.id, "id"), (.tokens, "tokens"), (.payload, "payload"), (.topic, "topic"), (.kind, "kind"),
                (.uuid, "uuid"), (.pushType, "push_type"), (.priority, "priority"), (.expiration, "expiration"),
                (.collapseID, "collapse_id"), (.enqueuedAt, "enqueued_at"),
            ]
            return spelled.map { (field: $0.0, name: Array($0.1.utf8)) }
        }()

        /// The field a key names, compared byte for byte (for these ASCII names, what `==` would say).
        static func named(_ key: ArraySlice<UInt8>) -> Field? {
            for entry in names where entry.name.count == key.count && entry.name.elementsEqual(key) { return entry.field }
            return nil
        }

        static func named(_ key: String) -> Field? {
            for entry in names where entry.name.elementsEqual(key.utf8) { return entry.field }
            return nil
        }
    }

    mutating func set(_ field: Field, _ value: JSONValue) {
        switch field {
        case .id: id = value
        case .kind: kind = value
        case .uuid: uuid = value
        case .topic: topic = value
        case .tokens: tokens = value
        case .payload: payload = value
        case .pushType: pushType = value
        case .priority: priority = value
        case .expiration: expiration = value
        case .collapseID: collapseID = value
        case .enqueuedAt: enqueuedAt = value
        }
    }

    /// From a parsed object: one pass over its members (looking each field up by name compared every key
    /// again for every field).
    init(_ members: [JSONMember], canonicalPayload: Range<Int>?) {
        self.canonicalPayload = canonicalPayload
        for member in members {
            if let field = Field.named(member.key) {
                set(field, member.value)
            } else if member.key == Self.providerName {
                setProvider(member.value)
            }
        }
    }
}

/// Reads the fields of an element that is a plain JSON object straight from its bytes, without building the
/// object: no key strings, no member array, tokens straight into strings (about a sixth of parsing a
/// one-token message). It gives up, returning nil, at anything else: an escaped or non-ASCII key, a
/// duplicate key, more than a few members it does not know, tokens that are not all strings, any JSON
/// error. The caller then parses the element as a tree, which gives the same fields for the same bytes and
/// reports every error as it always has, so this changes what a message costs and nothing else (the fuzzer
/// compares the two on every input).
enum MessageFieldReader {
    private typealias Field = MessageFields.Field

    static func read(_ raw: [UInt8], maxDepth: Int) -> MessageFields? {
        guard maxDepth >= 2 else { return nil }
        var reader = JSONParser(bytes: raw, maxDepth: maxDepth)
        var fields = MessageFields()
        var seen: UInt16 = 0  // a bit per field (a set's hashing cost more than the rest of a key)
        var others: [Range<Int>] = []
        reader.skipWhitespace()
        guard reader.take(UInt8(ascii: "{")) else { return nil }
        reader.skipWhitespace()
        if !reader.take(UInt8(ascii: "}")) {
            while true {
                reader.skipWhitespace()
                guard let key = reader.plainKey() else { return nil }
                reader.skipWhitespace()
                guard reader.take(UInt8(ascii: ":")) else { return nil }
                reader.skipWhitespace()
                let field = Field.named(raw[key])
                if let field {
                    let bit: UInt16 = 1 << field.rawValue
                    guard seen & bit == 0 else { return nil }
                    seen |= bit
                } else {
                    // Compared with each earlier one, so only a few: beyond the tree's own limit for that (where
                    // it switches to a set) a megabyte of distinct short keys would take quadratic time here.
                    guard others.count < JSONParser.linearKeyScanLimit,
                          !others.contains(where: { raw[$0].elementsEqual(raw[key]) }) else { return nil }
                    others.append(key)
                }
                do {
                    switch field {
                    case .payload:
                        if let kept = reader.canonicalObject(depth: 2) {
                            fields.canonicalPayload = kept
                            fields.payload = .object([])
                        } else if let (sorted, source) = reader.reorderedCanonicalObject(depth: 2) {
                            // Canonical but for its members' order (`notification` before `data`): sorted as bytes.
                            fields.sortedPayload = sorted
                            fields.sortedPayloadSource = source
                            fields.payload = .object([])
                        } else {
                            fields.payload = try reader.value(depth: 2)
                        }
                    case .tokens:
                        guard let strings = try reader.readStrings(depth: 2) else { return nil }
                        fields.tokenStrings = strings
                    case let field?: fields.set(field, try reader.value(depth: 2))
                    case nil where raw[key].elementsEqual(MessageFields.providerKey): fields.setProvider(try reader.value(depth: 2))
                    case nil: _ = try reader.value(depth: 2)
                    }
                } catch {
                    return nil
                }
                reader.skipWhitespace()
                if reader.take(UInt8(ascii: ",")) { continue }
                guard reader.take(UInt8(ascii: "}")) else { return nil }
                break
            }
        }
        reader.skipWhitespace()
        return reader.isAtEnd ? fields : nil
    }
}
