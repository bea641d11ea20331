import RedisClient

extension RedisReply {
    /// What a reply looks like, without what it holds, for errors about a reply a script should not have given:
    /// those are logged, and the queue's replies hold claimed elements with full device tokens (secrets never
    /// reach a log). Strings show their length only (an error or status its leading code too, `WRONGTYPE`),
    /// integers their value, arrays their count and the shapes of their first few items, two levels deep.
    var shape: String { shape(depth: 0) }

    private func shape(depth: Int) -> String {
        switch self {
        case .bulk(let bytes): return "bulk(\(bytes.count) bytes)"
        case .status(let text): return "status(\(Self.code(of: text))\(text.utf8.count) bytes)"
        case .error(let text): return "error(\(Self.code(of: text))\(text.utf8.count) bytes)"
        case .integer(let value): return "integer(\(value))"
        case .null: return "null"
        case .array(let items):
            guard depth < 2, !items.isEmpty else { return "array(\(items.count))" }
            let shown = items.prefix(Self.itemsShown).map { $0.shape(depth: depth + 1) }.joined(separator: ", ")
            return "array(\(items.count): \(shown)\(items.count > Self.itemsShown ? ", ..." : ""))"
        }
    }

    private static let itemsShown = 6

    /// A Redis error code (`ERR`, `NOSCRIPT`, `WRONGTYPE`) or a status word (`OK`): capital letters only,
    /// so no part of a value can come through.
    private static func code(of text: String) -> String {
        let word = text.prefix { $0 != " " }
        guard !word.isEmpty, word.count <= 16, word.allSatisfy({ $0.isASCII && $0.isUppercase }) else { return "" }
        return "\(word), "
    }
}
