/// A Redis reply, copied out of hiredis' memory so no pointer escapes the wrapper.
public enum RedisReply: Sendable, Equatable {
    case bulk([UInt8])
    case status(String)
    case integer(Int64)
    case array([RedisReply])
    case null
    case error(String)

    public var string: String? {
        switch self {
        case .bulk(let bytes): return String(decoding: bytes, as: UTF8.self)
        case .status(let text): return text
        default: return nil
        }
    }

    public var integer: Int64? {
        if case .integer(let value) = self { return value }
        return nil
    }

    public var array: [RedisReply]? {
        switch self {
        case .array(let items): return items
        case .null: return []
        default: return nil
        }
    }

    public var bytes: [UInt8]? {
        if case .bulk(let bytes) = self { return bytes }
        return nil
    }
}

public enum RedisError: Error, CustomStringConvertible, Sendable {
    /// The connection could not be made or broke; the caller reconnects with backoff.
    case connection(String)
    /// Redis answered with an error reply.
    case server(String)
    case unexpectedReply(String)

    public var description: String {
        switch self {
        case .connection(let text): return "Redis connection: \(text)"
        case .server(let text): return "Redis error: \(text)"
        case .unexpectedReply(let text): return "unexpected Redis reply: \(text)"
        }
    }
}
