/// Why a document is not acceptable JSON; `description` is meant for a dead letter's reason.
public struct JSONParseError: Error, Equatable, CustomStringConvertible {
    public var description: String
    public var offset: Int
}

/// A strict RFC 8259 parser for untrusted input. It rejects what JSONSerialization would accept silently
/// or could not survive: nesting deeper than `maxDepth` (recursion is bounded by it), duplicate object
/// keys (which value wins is undefined, so a producer's intent is unknown), invalid UTF-8, lone surrogate
/// escapes, raw control characters in strings, and trailing bytes. It never traps on any input.
public struct JSONParser {
    public static let defaultMaxDepth = 64
    /// Up to this many members, duplicate keys are found by comparing with each earlier key.
    static let linearKeyScanLimit = 16

    private let bytes: [UInt8]
    private var index = 0
    private let maxDepth: Int
    /// The root object's member whose value is kept as bytes when it is a canonical object.
    private var keptKey: String?
    private var kept: Range<Int>?

    public static func parse(_ bytes: [UInt8], maxDepth: Int = defaultMaxDepth) throws(JSONParseError) -> JSONValue {
        try parse(bytes, maxDepth: maxDepth, keepingCanonical: nil).value
    }

    /// `parse`, except that the root object's member `key`, if its value is an object already in canonical form
    /// (`CanonicalJSON`), is not built: the tree holds an empty object in its place and `kept` says where its
    /// bytes are, which are then exactly what `JSONWriter.canonical` would write for it. Any other value of
    /// that member is parsed (and checked) as usual, and `kept` is nil.
    public static func parse(_ bytes: [UInt8], maxDepth: Int = defaultMaxDepth,
                             keepingCanonical key: String?) throws(JSONParseError) -> (value: JSONValue, kept: Range<Int>?) {
        var parser = JSONParser(bytes: bytes, maxDepth: maxDepth)
        parser.keptKey = key
        parser.skipWhitespace()
        let value = try parser.value(depth: 1)
        parser.skipWhitespace()
        guard parser.index == bytes.count else { throw parser.failure("unexpected data after the JSON value") }
        return (value, parser.kept)
    }

    init(bytes: [UInt8], maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    private func failure(_ what: String) -> JSONParseError {
        JSONParseError(description: "\(what) at byte \(index)", offset: index)
    }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    mutating func value(depth: Int) throws(JSONParseError) -> JSONValue {
        guard let byte = current else { throw failure("unexpected end of input") }
        switch byte {
        case UInt8(ascii: "{"): return try object(depth: depth)
        case UInt8(ascii: "["): return try array(depth: depth)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
        default: throw failure("unexpected character")
        }
    }

    private mutating func literal(_ word: String) throws(JSONParseError) {
        for expected in word.utf8 {
            guard let byte = current else { throw failure("unexpected end of input") }
            guard byte == expected else { throw failure("unexpected character") }
            index += 1
        }
    }

    private mutating func object(depth: Int) throws(JSONParseError) -> JSONValue {
        guard depth <= maxDepth else { throw failure("nested deeper than \(maxDepth) levels") }
        index += 1  // {
        var members: [JSONMember] = []
        // Duplicate keys: a linear scan while the object is small (messages and payloads have a handful of
        // members, and hashing every key cost more than comparing), a set once it is not.
        var keys = Set<String>()  // filled only once the object outgrows the linear scan
        skipWhitespace()
        if current == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        // Room for a message's usual members at once: growing from empty reallocated 1, 2, 4, 8 (the values
        // live only while the message is parsed).
        members.reserveCapacity(8)
        while true {
            skipWhitespace()
            guard current == UInt8(ascii: "\"") else { throw failure("expected a string key") }
            let keyStart = index
            let key = try string()
            let duplicate: Bool
            if members.count < Self.linearKeyScanLimit {
                duplicate = members.contains { $0.key == key }
            } else {
                if keys.isEmpty { keys = Set(members.map(\.key)) }
                duplicate = !keys.insert(key).inserted
            }
            guard !duplicate else {
                index = keyStart
                throw failure("duplicate key \"\(Printable.clipped(key, to: 40))\"")
            }
            skipWhitespace()
            guard current == UInt8(ascii: ":") else { throw failure("expected ':'") }
            index += 1
            skipWhitespace()
            if depth == 1, let keptKey, key == keptKey,
               let end = CanonicalJSON.objectEnd(in: bytes, from: index, depth: depth + 1, maxDepth: maxDepth) {
                kept = index..<end
                index = end
                members.append(JSONMember(key: key, value: .object([])))
            } else {
                members.append(JSONMember(key: key, value: try value(depth: depth + 1)))
            }
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"): index += 1; return .object(members)
            case nil: throw failure("unexpected end of input")
            default: throw failure("expected ',' or '}'")
            }
        }
    }

    private mutating func array(depth: Int) throws(JSONParseError) -> JSONValue {
        guard depth <= maxDepth else { throw failure("nested deeper than \(maxDepth) levels") }
        index += 1  // [
        var items: [JSONValue] = []
        skipWhitespace()
        if current == UInt8(ascii: "]") {
            index += 1
            return .array(items)
        }
        while true {
            skipWhitespace()
            items.append(try value(depth: depth + 1))
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"): index += 1; return .array(items)
            case nil: throw failure("unexpected end of input")
            default: throw failure("expected ',' or ']'")
            }
        }
    }

    private mutating func number() throws(JSONParseError) -> String {
        let start = index
        let (end, valid) = Self.numberEnd(in: bytes, from: index)
        index = end
        guard valid else { throw failure("invalid number") }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    /// RFC 8259's number grammar from `start`: where the number ends, or where it went wrong (`valid` false).
    /// Shared with `CanonicalJSON`, which must read numbers exactly as the parser does.
    static func numberEnd(in bytes: [UInt8], from start: Int) -> (end: Int, valid: Bool) {
        let count = bytes.count
        func isDigit(_ position: Int) -> Bool { position < count && bytes[position] &- UInt8(ascii: "0") < 10 }
        func isByte(_ position: Int, _ byte: UInt8) -> Bool { position < count && bytes[position] == byte }
        var index = start
        if isByte(index, UInt8(ascii: "-")) { index += 1 }
        guard isDigit(index) else { return (index, false) }
        let leadingZero = isByte(index, UInt8(ascii: "0"))
        index += 1
        if !leadingZero { while isDigit(index) { index += 1 } }
        if isByte(index, UInt8(ascii: ".")) {
            index += 1
            guard isDigit(index) else { return (index, false) }
            while isDigit(index) { index += 1 }
        }
        if isByte(index, UInt8(ascii: "e")) || isByte(index, UInt8(ascii: "E")) {
            index += 1
            if isByte(index, UInt8(ascii: "+")) || isByte(index, UInt8(ascii: "-")) { index += 1 }
            guard isDigit(index) else { return (index, false) }
            while isDigit(index) { index += 1 }
        }
        return (index, true)
    }

    private mutating func string() throws(JSONParseError) -> String {
        index += 1  // opening quote
        let start = index
        // Fast path: no escapes, the bytes between the quotes are the string; if they are all ASCII there is
        // nothing to validate.
        var high: UInt8 = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let text = high < 0x80 ? String(decoding: bytes[start..<index], as: UTF8.self)
                                       : try validated(bytes[start..<index], at: start)
                index += 1
                return text
            }
            high |= byte
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw failure("control character in a string") }
            index += 1
        }
        var buffer = Array(bytes[start..<index])
        while true {
            guard index < bytes.count else { throw failure("unterminated string") }
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return try validated(buffer[...], at: start)
            case UInt8(ascii: "\\"):
                index += 1
                try escape(into: &buffer)
            case 0..<0x20:
                throw failure("control character in a string")
            default:
                buffer.append(byte)
                index += 1
            }
        }
    }

    private func validated(_ slice: ArraySlice<UInt8>, at start: Int) throws(JSONParseError) -> String {
        guard let text = String(validating: slice, as: UTF8.self) else {
            throw JSONParseError(description: "invalid UTF-8 in the string at byte \(start)", offset: start)
        }
        return text
    }

    private mutating func escape(into buffer: inout [UInt8]) throws(JSONParseError) {
        guard let byte = current else { throw failure("unterminated string") }
        index += 1
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): buffer.append(byte)
        case UInt8(ascii: "b"): buffer.append(0x08)
        case UInt8(ascii: "f"): buffer.append(0x0C)
        case UInt8(ascii: "n"): buffer.append(0x0A)
        case UInt8(ascii: "r"): buffer.append(0x0D)
        case UInt8(ascii: "t"): buffer.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = UInt32(try hex4())
            if (0xD800...0xDBFF).contains(scalar) {
                guard bytes.count - index >= 2, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                    throw failure("lone surrogate in a \\u escape")
                }
                index += 2
                let low = UInt32(try hex4())
                guard (0xDC00...0xDFFF).contains(low) else { throw failure("lone surrogate in a \\u escape") }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00...0xDFFF).contains(scalar) {
                throw failure("lone surrogate in a \\u escape")
            }
            guard let unicode = Unicode.Scalar(scalar) else { throw failure("invalid \\u escape") }
            buffer.append(contentsOf: Array(String(Character(unicode)).utf8))
        default:
            throw failure("invalid escape")
        }
    }

    private mutating func hex4() throws(JSONParseError) -> UInt16 {
        guard bytes.count - index >= 4 else { throw failure("invalid \\u escape") }
        var value: UInt16 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw failure("invalid \\u escape")
            }
            value = value << 4 | UInt16(digit)
            index += 1
        }
        return value
    }
}

// MARK: - Reading an object member by member

/// What `MessageFieldReader` reads a queue element with, beside the parser's own initialiser, `value` and
/// `skipWhitespace`: the parser's grammar for every value, so that a value read this way is the one the tree
/// would hold. The reader gives up (and the element is parsed as a tree, which reports any error) at anything
/// but the plain case; these report no errors of their own.
extension JSONParser {
    var isAtEnd: Bool { index == bytes.count }

    /// Steps over `byte` if it is next.
    mutating func take(_ byte: UInt8) -> Bool {
        guard current == byte else { return false }
        index += 1
        return true
    }

    /// The bytes of a key between its quotes, if it is printable ASCII without escapes (so that byte equality
    /// is what string equality would be); nil otherwise.
    mutating func plainKey() -> Range<Int>? {
        guard current == UInt8(ascii: "\"") else { return nil }
        let start = index + 1
        var position = start
        while position < bytes.count {
            switch bytes[position] {
            case UInt8(ascii: "\""):
                index = position + 1
                return start..<position
            case UInt8(ascii: "\\"): return nil
            case 0x20...0x7E: position += 1
            default: return nil
            }
        }
        return nil
    }

    /// An array of strings, as its strings; nil (having read part of it) when an item is not a string.
    mutating func readStrings(depth: Int) throws(JSONParseError) -> [String]? {
        guard depth <= maxDepth, take(UInt8(ascii: "[")) else { return nil }
        var items: [String] = []
        skipWhitespace()
        if take(UInt8(ascii: "]")) { return items }
        while true {
            skipWhitespace()
            guard current == UInt8(ascii: "\"") else { return nil }
            items.append(try string())
            skipWhitespace()
            if take(UInt8(ascii: ",")) { continue }
            guard take(UInt8(ascii: "]")) else { return nil }
            return items
        }
    }

    /// An object here canonical but for the order of its members (`CanonicalJSON.reorderedObject`), stepped
    /// over: its canonical bytes and its own range. Nil, with nothing read, otherwise.
    mutating func reorderedCanonicalObject(depth: Int) -> (canonical: [UInt8], range: Range<Int>)? {
        guard let (end, canonical) = CanonicalJSON.reorderedObject(in: bytes, from: index, depth: depth, maxDepth: maxDepth) else {
            return nil
        }
        defer { index = end }
        return (canonical, index..<end)
    }

    /// A canonical object here (`CanonicalJSON`), stepped over: its range. Nil, with nothing read, otherwise.
    mutating func canonicalObject(depth: Int) -> Range<Int>? {
        guard let end = CanonicalJSON.objectEnd(in: bytes, from: index, depth: depth, maxDepth: maxDepth) else { return nil }
        defer { index = end }
        return index..<end
    }
}
