import Foundation

/// `redis[s]://[user:password@]host:port/db`. Its description never shows the password.
public struct RedisURL: Sendable, Equatable, CustomStringConvertible {
    public var host: String = "127.0.0.1"
    public var port: Int = 6379
    public var database: Int = 0
    /// An ACL user (Redis 6+); nil authenticates as the default user.
    public var username: String?
    public var password: Secret?
    /// `rediss://`: TLS to Redis, verified against the system's CAs or `redis.ca_file`.
    public var tls = false

    public init(host: String = "127.0.0.1", port: Int = 6379, database: Int = 0) {
        self.host = host
        self.port = port
        self.database = database
    }

    public init(parsing text: String) throws {
        let shown = Self.redacted(text)
        guard let components = URLComponents(string: text), let scheme = components.scheme,
              scheme == "redis" || scheme == "rediss", let host = components.host, !host.isEmpty
        else { throw ConfigurationError.invalid(key: "redis.url", reason: "'\(shown)' is not redis[s]://[user:password@]host:port/db") }
        self.host = host
        self.tls = scheme == "rediss"
        let port = components.port ?? 6379
        guard (1...65535).contains(port) else {
            throw ConfigurationError.invalid(key: "redis.url", reason: "'\(shown)': port must be 1..65535")
        }
        self.port = port
        let path = components.path.trimmingCharacters(in: CharacterSet(charactersIn: "/"))
        if !path.isEmpty {
            guard let db = Int(path), db >= 0, db <= 1_000_000 else {
                throw ConfigurationError.invalid(key: "redis.url", reason: "database '\(path)' is not a number")
            }
            database = db
        }
        if let user = components.percentEncodedUser, !user.isEmpty { username = user.removingPercentEncoding ?? user }
        if let pass = components.percentEncodedPassword, !pass.isEmpty { password = Secret(pass.removingPercentEncoding ?? pass) }
        // redis://secret@host: a lone user part is the password of the default user, as redis-cli reads it.
        if password == nil, let user = username { password = Secret(user); username = nil }
    }

    /// The URL as it may be shown: scheme, user, host, port and database; the password as `***`.
    public var description: String {
        let user = username.map { "\($0):***@" } ?? (password != nil ? ":***@" : "")
        return "\(tls ? "rediss" : "redis")://\(user)\(host):\(port)/\(database)"
    }

    /// Any text given as a Redis URL with the user-info part's password replaced by `***`, for error
    /// messages about a URL that did not even parse.
    public static func redacted(_ text: String) -> String {
        guard let schemeEnd = text.range(of: "://"), let at = text[schemeEnd.upperBound...].lastIndex(of: "@") else {
            return text
        }
        let userInfo = text[schemeEnd.upperBound..<at]
        let user = userInfo.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        let shownUser = userInfo.contains(":") ? "\(user):***" : "***"
        return String(text[..<schemeEnd.upperBound]) + shownUser + String(text[at...])
    }
}
