/// Serializes a `JSONValue` canonically: object keys sorted by their UTF-8 bytes, no whitespace,
/// numbers exactly as the producer wrote them, strings escaped as RFC 8259 requires (nothing more:
/// non-ASCII text stays UTF-8). Identical content gives identical bytes, which is what merging compares.
public enum JSONWriter {
    public static func canonical(_ value: JSONValue) -> [UInt8] {
        // Sized exactly: a parsed payload lives until its last token is answered, up to `max_in_flight` of them
        // at once, so a fixed guess (128 bytes) held a few MB of slack at the peak.
        var out: [UInt8] = []
        out.reserveCapacity(length(of: value))
        write(value, into: &out)
        return out
    }

    /// How many bytes `write` produces for `value` (computed the same way, without writing).
    public static func length(of value: JSONValue) -> Int {
        switch value {
        case .null: return 4
        case .bool(let flag): return flag ? 4 : 5
        case .number(let literal): return literal.utf8.count
        case .string(let text): return stringLength(text)
        case .array(let items):
            // Brackets and a comma between items; braces, a colon per member and a comma between members.
            return items.reduce(items.isEmpty ? 2 : 1 + items.count) { $0 + length(of: $1) }
        case .object(let members):
            return members.reduce(members.isEmpty ? 2 : 1 + 2 * members.count) {
                $0 + stringLength($1.key) + length(of: $1.value)
            }
        }
    }

    private static func stringLength(_ text: String) -> Int {
        // The string's contiguous bytes: iterating its UTF-8 view byte by byte costs several times more.
        text.utf8.withContiguousStorageIfAvailable { escapedLength($0) } ?? escapedLength(text.utf8)
    }

    @inline(__always)
    private static func escapedLength<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> Int {
        var count = 2
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), 0x0A, 0x0D, 0x09: count += 2
            case 0..<0x20: count += 6
            default: count += 1
            }
        }
        return count
    }

    public static func write(_ value: JSONValue, into out: inout [UInt8]) {
        switch value {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let flag): out.append(contentsOf: (flag ? "true" : "false").utf8)
        case .number(let literal): out.append(contentsOf: literal.utf8)
        case .string(let text): writeString(text, into: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (position, item) in items.enumerated() {
                if position > 0 { out.append(UInt8(ascii: ",")) }
                write(item, into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            // Producers usually write keys in order already; sorting only when they did not saves a copy.
            let inOrder = zip(members, members.dropFirst()).allSatisfy { !precedes($1.key, $0.key) }
            let sorted = inOrder ? members : members.sorted { precedes($0.key, $1.key) }
            for (position, member) in sorted.enumerated() {
                if position > 0 { out.append(UInt8(ascii: ",")) }
                writeString(member.key, into: &out)
                out.append(UInt8(ascii: ":"))
                write(member.value, into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// Byte order of UTF-8, which is code point order: the order canonical objects list their keys in.
    static func precedes(_ a: String, _ b: String) -> Bool { a.utf8.lexicographicallyPrecedes(b.utf8) }

    public static func writeString(_ text: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        // Nearly every string needs no escape: its contiguous bytes are copied whole, where appending them one
        // by one from the UTF-8 view cost several times more.
        let copied = text.utf8.withContiguousStorageIfAvailable { bytes in
            guard !bytes.contains(where: needsEscape) else { return false }
            out.append(contentsOf: bytes)
            return true
        }
        if copied != true { appendEscaped(text.utf8, into: &out) }
        out.append(UInt8(ascii: "\""))
    }

    @inline(__always)
    private static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }

    private static func appendEscaped(_ bytes: String.UTF8View, into out: inout [UInt8]) {
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                out.append(UInt8(ascii: "\\"))
                out.append(byte)
            case 0x0A:
                out.append(UInt8(ascii: "\\"))
                out.append(UInt8(ascii: "n"))
            case 0x0D:
                out.append(UInt8(ascii: "\\"))
                out.append(UInt8(ascii: "r"))
            case 0x09:
                out.append(UInt8(ascii: "\\"))
                out.append(UInt8(ascii: "t"))
            case 0..<0x20:
                for escaped in [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")] { out.append(escaped) }
                out.append(hexDigit(byte >> 4))
                out.append(hexDigit(byte & 0x0F))
            default: out.append(byte)
            }
        }
    }

    private static func hexDigit(_ nibble: UInt8) -> UInt8 { nibble < 10 ? nibble + 48 : nibble + 87 }
}

/// Text from outside made safe for a log line, an error reason or a tool's output for people: control
/// characters and the other characters a terminal does not show as themselves escaped, and (`clipped`) cut to a
/// length, so a crafted value can neither forge log lines, flood them, nor send escape sequences to a terminal.
public enum Printable {
    public static func clipped(_ text: String, to limit: Int) -> String {
        var out = ""
        var count = 0
        for scalar in text.unicodeScalars {
            if count >= limit {
                out += "…"
                break
            }
            if isPrintable(scalar) {
                out.unicodeScalars.append(scalar)
            } else {
                out += "\\u{\(String(scalar.value, radix: 16))}"
            }
            count += 1
        }
        return out
    }

    /// The whole text, escaped as `clipped` escapes it: the tools print ids, topics and reasons in full, since a
    /// cut one could not be told from another or searched for.
    public static func escaped(_ text: String) -> String { clipped(text, to: .max) }

    /// JSON text (a dead letter as stored) made printable the JSON way: each non-printable character becomes a
    /// `\uXXXX` escape. Inside a string, where JSON lets DEL, the C1 controls (U+009B is a one-byte CSI to some
    /// terminals) and U+2028 stand unescaped, that keeps the document valid and its meaning the same, so `dlq show`
    /// can still be piped into a JSON reader; a record that is not JSON may hold anything, and is escaped alike.
    /// A tab is kept: JSON allows it between tokens, and a terminal only moves the cursor for it.
    public static func escapedJSON(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            if isPrintable(scalar) || scalar == "\t" {
                out.unicodeScalars.append(scalar)
            } else {
                // Every non-printable is in the Basic Multilingual Plane: one UTF-16 unit, four hex digits.
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
            }
        }
        return out
    }

    /// False for what a terminal or a log viewer would act on or hide instead of showing: C0 and C1 controls and
    /// DEL, the Unicode line and paragraph separators, and the bidirectional controls that reorder the text
    /// around them (a value could otherwise appear as another).
    public static func isPrintable(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0..<0x20, 0x7F..<0xA0, 0x2028, 0x2029, 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: return false
        default: return true
        }
    }
}
