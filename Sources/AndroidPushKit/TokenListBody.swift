import PushCore

/// A request body with its list of tokens spliced in: the JSON before the list (`prefix`) and after it (`suffix`)
/// are made once per job and the same for each of its requests, so a request of 1,000 tokens costs copying them
/// and no JSON written or read (as the one-token services' bodies are made).
///
/// Written canonically (keys in byte order at every level, no whitespace), so one job's requests are identical but
/// for their tokens, and a test can compare bytes. The list is the member `"token"` of the object `path` leads to
/// (`["message"]`: `message.token`; `[]`: the document's own `token`); it must not be in the document itself.
public struct TokenListBody: Equatable, Sendable {
    public let prefix: [UInt8]
    public let suffix: [UInt8]

    public init(document: JSONValue, path: [String]) {
        var out: [UInt8] = []
        out.reserveCapacity(JSONWriter.length(of: document) + 16)
        var split = 0
        Self.write(document, path: path[...], into: &out, split: &split)
        prefix = Array(out[..<split])
        suffix = Array(out[split...])
    }

    /// The whole body for `tokens`, in their order, each escaped as JSON strings are (a token the parser accepted
    /// needs no escape; one that does is escaped all the same, so the body stays JSON).
    public func body(tokens: [String]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(prefix.count + suffix.count + tokens.reduce(0) { $0 + $1.utf8.count + 3 })
        out += prefix
        for (position, token) in tokens.enumerated() {
            if position > 0 { out.append(UInt8(ascii: ",")) }
            JSONWriter.writeString(token, into: &out)
        }
        out += suffix
        return out
    }

    /// `value` with `"token":[` + split + `]` as a member of the object at `path` (made an object if it is not).
    private static func write(_ value: JSONValue, path: ArraySlice<String>, into out: inout [UInt8], split: inout Int) {
        var members = value.objectMembers ?? []
        let key = path.first ?? "token"
        if !members.contains(where: { $0.key == key }) { members.append(JSONMember(key: key, value: .object([]))) }
        members.sort { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
        out.append(UInt8(ascii: "{"))
        for (position, member) in members.enumerated() {
            if position > 0 { out.append(UInt8(ascii: ",")) }
            JSONWriter.writeString(member.key, into: &out)
            out.append(UInt8(ascii: ":"))
            if member.key != key {
                JSONWriter.write(member.value, into: &out)
            } else if path.isEmpty {
                out.append(UInt8(ascii: "["))
                split = out.count
                out.append(UInt8(ascii: "]"))
            } else {
                write(member.value, path: path.dropFirst(), into: &out, split: &split)
            }
        }
        out.append(UInt8(ascii: "}"))
    }
}
