import Foundation

/// `redis://[user:password@]host:port/db`
public struct RedisURL: Sendable, Equatable {
    public var host: String = "127.0.0.1"
    public var port: Int = 6379
    public var database: Int = 0
    public var username: String?
    public var password: String?

    public init(host: String = "127.0.0.1", port: Int = 6379, database: Int = 0) {
        self.host = host
        self.port = port
        self.database = database
    }

    public init(parsing text: String) throws {
        guard let components = URLComponents(string: text), components.scheme == "redis",
              let host = components.host, !host.isEmpty
        else { throw ConfigurationError.invalid(key: "redis.url", reason: "'\(text)' is not redis://[user:password@]host:port/db") }
        self.host = host
        self.port = components.port ?? 6379
        let path = components.path.trimmingCharacters(in: CharacterSet(charactersIn: "/"))
        if !path.isEmpty {
            guard let db = Int(path), db >= 0 else {
                throw ConfigurationError.invalid(key: "redis.url", reason: "database '\(path)' is not a number")
            }
            database = db
        }
        if let user = components.user, !user.isEmpty { username = user.removingPercentEncoding ?? user }
        if let pass = components.password, !pass.isEmpty { password = pass.removingPercentEncoding ?? pass }
        if password == nil, username != nil { password = username; username = nil }
    }
}
