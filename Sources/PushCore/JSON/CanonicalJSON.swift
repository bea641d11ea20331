/// Recognises JSON that is already in `JSONWriter`'s canonical form, without building it: no whitespace,
/// object keys in strictly increasing byte order, strings of ASCII text with only the escapes the writer
/// itself uses, numbers as written. For such bytes `JSONWriter.canonical(JSONParser.parse(bytes))` is the
/// bytes themselves, so a payload that passes needs no tree, no writing and no freeing: the parser keeps its
/// bytes as they are (most producers write a small payload this way).
///
/// It accepts a subset of what `JSONParser` accepts and never more: anything else (whitespace, unsorted or
/// escaped keys, non-ASCII text, other escapes, nesting near `maxDepth`) is simply not recognised, and the
/// caller parses the value the ordinary way, which also reports any error. The fuzzer checks both properties.
public enum CanonicalJSON {
    /// Where the canonical object starting at `start` ends (one past its `}`), or nil if the bytes there are
    /// not a canonical object. `depth` is the object's own nesting level, as `JSONParser` counts it.
    public static func objectEnd(in bytes: [UInt8], from start: Int, depth: Int, maxDepth: Int) -> Int? {
        guard start < bytes.count, bytes[start] == UInt8(ascii: "{") else { return nil }
        var scanner = Scanner(bytes: bytes, index: start, maxDepth: maxDepth)
        guard scanner.value(depth: depth) else { return nil }
        return scanner.index
    }

    /// The object starting at `start` in canonical form when it is canonical but for the order of its members,
    /// at any depth (producers write `notification` before `data`, `title` before `body`): where it ends, and
    /// the bytes `JSONWriter.canonical(JSONParser.parse(…))` gives for it, made by copying and sorting its
    /// members' bytes, with no tree to build, write and free. Nil for anything else (whitespace, escaped or
    /// non-ASCII keys, a key given twice, other escapes, nesting near `maxDepth`), and for an object over
    /// `reorderLimitBytes`: payloads are at most a few KB, and the limit bounds the rescans of nested objects.
    public static func reorderedObject(in bytes: [UInt8], from start: Int, depth: Int, maxDepth: Int) -> (end: Int, canonical: [UInt8])? {
        guard start < bytes.count, bytes[start] == UInt8(ascii: "{") else { return nil }
        var scanner = Scanner(bytes: bytes, index: start, maxDepth: maxDepth)
        scanner.limit = min(bytes.count, start + reorderLimitBytes)
        var out: [UInt8] = []
        guard scanner.reorderedObject(depth: depth, into: &out) else { return nil }
        return (scanner.index, out)
    }

    /// Calls `body` with each member of the canonical object at `bytes[range]` (a range `objectEnd` or
    /// `reorderedObject` gave): its key's bytes without quotes and its value's range, until `body` says false.
    /// True when every call said true.
    public static func allMembers(of bytes: [UInt8], object range: Range<Int>,
                                  _ body: (ArraySlice<UInt8>, Range<Int>) -> Bool) -> Bool {
        var scanner = Scanner(bytes: bytes, index: range.lowerBound + 1, maxDepth: Int.max)
        let closing = range.upperBound - 1
        while scanner.index < closing {
            let keyStart = scanner.index + 1
            guard scanner.string(isKey: true, previous: nil) else { return false }
            let key = bytes[keyStart..<(scanner.index - 1)]
            guard scanner.skip(UInt8(ascii: ":")) else { return false }
            let valueStart = scanner.index
            guard scanner.value(depth: 0), body(key, valueStart..<scanner.index) else { return false }
            if scanner.index < closing { guard scanner.skip(UInt8(ascii: ",")) else { return false } }
        }
        return true
    }

    /// The largest object `reorderedObject` sorts (every provider's payload limit is below it).
    public static let reorderLimitBytes = 8192

    /// Whether the canonical object in `bytes[range]` has a member `probe.key` whose value is an object of one
    /// member, `probe.member` (`{"aps":{"content-available":…}}`: what a provider may infer a kind of push from).
    /// Only for a range `objectEnd` accepted: it scans without a depth limit, which that acceptance bounds.
    static func memberHasOnly(_ bytes: [UInt8], object range: Range<Int>, _ probe: PayloadMemberProbe) -> Bool {
        // Find the top-level key: walk the members, skipping each value with the scanner.
        var scanner = Scanner(bytes: bytes, index: range.lowerBound + 1, maxDepth: Int.max)
        let closing = range.upperBound - 1
        while scanner.index < closing {
            let keyStart = scanner.index
            guard scanner.string(isKey: true, previous: nil), scanner.skip(UInt8(ascii: ":")) else { return false }
            let valueStart = scanner.index
            if bytes[keyStart..<valueStart].elementsEqual(probe.keyBytes) {
                // One member exactly: the key, its value, then the object's closing brace. Keys are unique, so
                // a value that starts any other way settles it without reading the rest (the usual alert).
                guard bytes[valueStart..<closing].starts(with: probe.onlyMemberBytes) else { return false }
                var inner = Scanner(bytes: bytes, index: valueStart + probe.onlyMemberBytes.count, maxDepth: Int.max)
                return inner.value(depth: 0) && inner.skip(UInt8(ascii: "}"))
            }
            guard scanner.value(depth: 0), scanner.index < closing, scanner.skip(UInt8(ascii: ",")) else { return false }
        }
        return false
    }

    private struct Scanner {
        let bytes: [UInt8]
        var index: Int
        let maxDepth: Int
        /// Bytes at and past this are not read (`reorderedObject`'s bound); all of them otherwise.
        var limit: Int

        init(bytes: [UInt8], index: Int, maxDepth: Int) {
            self.bytes = bytes
            self.index = index
            self.maxDepth = maxDepth
            limit = bytes.count
        }

        var current: UInt8? { index < limit ? bytes[index] : nil }

        /// A value canonical but for the order of its objects' members: its canonical bytes appended to `out`.
        /// A value that is canonical already (most nested objects) is scanned and copied whole.
        mutating func reorderedValue(depth: Int, into out: inout [UInt8]) -> Bool {
            let start = index
            if value(depth: depth) {
                out.append(contentsOf: bytes[start..<index])
                return true
            }
            index = start
            switch current {
            case UInt8(ascii: "{"):
                return reorderedObject(depth: depth, into: &out)
            case UInt8(ascii: "["):
                guard depth < maxDepth else { return false }
                index += 1
                out.append(UInt8(ascii: "["))
                if skip(UInt8(ascii: "]")) {
                    out.append(UInt8(ascii: "]"))
                    return true
                }
                while true {
                    guard reorderedValue(depth: depth + 1, into: &out) else { return false }
                    if skip(UInt8(ascii: "]")) {
                        out.append(UInt8(ascii: "]"))
                        return true
                    }
                    guard skip(UInt8(ascii: ",")) else { return false }
                    out.append(UInt8(ascii: ","))
                }
            default:
                return false
            }
        }

        /// The most members `reorderedObject` sorts in one object (its table is on the stack); more, and the caller
        /// parses the payload the ordinary way.
        static let reorderMembersLimit = 32

        /// An object whose members may come in any order: each member's key and value found (a canonical value
        /// as its range in `bytes`, one that needed sorting itself as its sorted bytes in `nested`), then the
        /// members written in key order (keys are unescaped ASCII here, so their bytes sort as the writer sorts).
        mutating func reorderedObject(depth: Int, into out: inout [UInt8]) -> Bool {
            guard depth < maxDepth else { return false }
            let start = index
            guard skip(UInt8(ascii: "{")) else { return false }
            if skip(UInt8(ascii: "}")) {
                out.append(UInt8(ascii: "{"))
                out.append(UInt8(ascii: "}"))
                return true
            }
            typealias Member = (key: Range<Int>, value: Range<Int>, inNested: Bool)
            return withUnsafeTemporaryAllocation(of: Member.self, capacity: Self.reorderMembersLimit) { members -> Bool in
                var count = 0
                var nested: [UInt8] = []
                var inOrder = true
                while true {
                    guard count < Self.reorderMembersLimit else { return false }
                    let keyStart = index + 1
                    guard string(isKey: true, previous: nil) else { return false }
                    let key = keyStart..<(index - 1)
                    if count > 0, !bytes[members[count - 1].key].lexicographicallyPrecedes(bytes[key]) { inOrder = false }
                    guard skip(UInt8(ascii: ":")) else { return false }
                    let valueStart = index
                    if value(depth: depth + 1) {
                        members.initializeElement(at: count, to: (key, valueStart..<index, false))
                    } else {
                        index = valueStart
                        let nestedStart = nested.count
                        guard reorderedValue(depth: depth + 1, into: &nested) else { return false }
                        members.initializeElement(at: count, to: (key, nestedStart..<nested.count, true))
                    }
                    count += 1
                    if skip(UInt8(ascii: "}")) { break }
                    guard skip(UInt8(ascii: ",")) else { return false }
                }
                var table = UnsafeMutableBufferPointer(rebasing: members[0..<count])
                if !inOrder {
                    table.sort { bytes[$0.key].lexicographicallyPrecedes(bytes[$1.key]) }
                    for i in 1..<count where !bytes[table[i - 1].key].lexicographicallyPrecedes(bytes[table[i].key]) {
                        return false  // a key given twice: the parser's error to report
                    }
                }
                // Without whitespace, sorting keeps the length: the object's own count of bytes.
                out.reserveCapacity(out.count + (index - start))
                out.append(UInt8(ascii: "{"))
                for position in 0..<count {
                    let member = table[position]
                    if position > 0 { out.append(UInt8(ascii: ",")) }
                    out.append(UInt8(ascii: "\""))
                    out.append(contentsOf: bytes[member.key])
                    out.append(UInt8(ascii: "\""))
                    out.append(UInt8(ascii: ":"))
                    if member.inNested { out.append(contentsOf: nested[member.value]) } else { out.append(contentsOf: bytes[member.value]) }
                }
                out.append(UInt8(ascii: "}"))
                return true
            }
        }

        mutating func skip(_ byte: UInt8) -> Bool {
            guard current == byte else { return false }
            index += 1
            return true
        }

        mutating func value(depth: Int) -> Bool {
            guard let byte = current else { return false }
            switch byte {
            case UInt8(ascii: "{"): return object(depth: depth)
            case UInt8(ascii: "["): return array(depth: depth)
            case UInt8(ascii: "\""): return string(isKey: false, previous: nil)
            case UInt8(ascii: "t"): return literal("true")
            case UInt8(ascii: "f"): return literal("false")
            case UInt8(ascii: "n"): return literal("null")
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return number()
            default: return false
            }
        }

        mutating func object(depth: Int) -> Bool {
            guard depth < maxDepth else { return false }  // the parser's limit is `depth <= maxDepth`: keep clear of it
            index += 1
            if skip(UInt8(ascii: "}")) { return true }
            var previous: Range<Int>?
            while true {
                let keyStart = index + 1
                guard string(isKey: true, previous: previous) else { return false }
                previous = keyStart..<(index - 1)
                guard skip(UInt8(ascii: ":")), value(depth: depth + 1) else { return false }
                if skip(UInt8(ascii: "}")) { return true }
                guard skip(UInt8(ascii: ",")) else { return false }
            }
        }

        mutating func array(depth: Int) -> Bool {
            guard depth < maxDepth else { return false }
            index += 1
            if skip(UInt8(ascii: "]")) { return true }
            while true {
                guard value(depth: depth + 1) else { return false }
                if skip(UInt8(ascii: "]")) { return true }
                guard skip(UInt8(ascii: ",")) else { return false }
            }
        }

        /// A string of ASCII text (no control characters). Values may use the writer's escapes (`\"`, `\\`, `\n`, `\r`, `\t`); keys
        /// may not (their escaped bytes would not sort as the writer sorts decoded keys) and must sort after
        /// `previous`, the key before them in the same object.
        mutating func string(isKey: Bool, previous: Range<Int>?) -> Bool {
            guard skip(UInt8(ascii: "\"")) else { return false }
            let start = index
            while let byte = current {
                switch byte {
                case UInt8(ascii: "\""):
                    let key = start..<index
                    index += 1
                    if let previous {
                        return bytes[previous].lexicographicallyPrecedes(bytes[key])
                    }
                    return true
                case UInt8(ascii: "\\"):
                    guard !isKey, index + 1 < bytes.count else { return false }
                    switch bytes[index + 1] {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                        index += 2
                    default:
                        return false
                    }
                case 0x20...0x7F:
                    index += 1  // the writer escapes only control characters, '"' and '\\'
                default:
                    return false  // control characters (the parser rejects them) and non-ASCII text
                }
            }
            return false
        }

        mutating func literal(_ word: String) -> Bool {
            let count = word.utf8.count
            guard bytes.count - index >= count, bytes[index..<(index + count)].elementsEqual(word.utf8) else { return false }
            index += count
            return true
        }

        /// A number, read by the parser's own grammar (the writer copies the literal).
        mutating func number() -> Bool {
            let (end, valid) = JSONParser.numberEnd(in: bytes, from: index)
            index = end
            return valid
        }
    }
}
