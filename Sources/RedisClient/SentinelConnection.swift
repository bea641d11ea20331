import Logging
import PushCore

/// A connection to the primary that Redis Sentinel names (`redis.sentinel`). The primary's address comes
/// from `SENTINEL get-master-addr-by-name`, each sentinel tried in turn; `redis.url` supplies password,
/// database and TLS, and `redis.sentinel.password` (with `username`) the sentinels' own credentials. The sentinels are asked again after a connection error, after a `-READONLY` reply
/// (the node was demoted to a replica) and every second while in use, so a failover is followed without a
/// restart. Whatever node they name, a new one or the same again, is checked with ROLE each time before it
/// is used: a sentinel may still name a primary it has not yet found dead, a replica not yet promoted, or a
/// node that came back (or was turned) into a replica since it was last checked, on a connection made
/// again after an error. A replica is never used, not even to read.
public final class SentinelConnection: RedisCommands {
    private let template: RedisURL
    private let master: String
    private let sentinels: [(host: String, port: Int)]
    /// AUTH for each sentinel connection; a `Secret`, so it shows nowhere.
    private let sentinelUsername: String?
    private let sentinelPassword: Secret?
    private let name: String
    private let caFile: String
    private let socketTimeout: Duration
    private let logger = Logger(label: "push.redis.sentinel")

    private struct State {
        var primary: String?
        var connection: RedisConnection?
        /// The sentinels must be asked before the next command.
        var stale = true
        var askedAt: ContinuousClock.Instant?
        var sentinelConnections: [String: RedisConnection] = [:]
    }
    private let state = Locked(State())

    /// How often the sentinels are asked while nothing went wrong. A failover that keeps the old primary up
    /// (SENTINEL FAILOVER, a partition that heals) leaves it taking writes until the sentinels demote it,
    /// which can take them 10 s; those writes are lost with the demotion. Asking every second keeps that
    /// window short, for one cheap command a second per connection.
    public static let defaultRefreshInterval = Duration.seconds(1)
    private let refreshInterval: Duration

    public init(url: RedisURL, sentinel: SentinelSettings, name: String, caFile: String = "", socketTimeout: Duration = .seconds(5),
                refreshInterval: Duration = SentinelConnection.defaultRefreshInterval) {
        self.refreshInterval = refreshInterval
        self.template = url
        self.master = sentinel.master
        self.sentinels = sentinel.addresses
        self.sentinelUsername = sentinel.username
        self.sentinelPassword = sentinel.password
        self.name = name
        self.caFile = caFile
        self.socketTimeout = socketTimeout
    }

    /// `host:port` of the primary in use, nil before the sentinels were first asked.
    public var currentPrimary: String? { state.withLock { $0.primary } }

    /// Sends the commands to the primary. Commands answered `-READONLY` did not run (the node is a replica
    /// now): they are sent once more, to the primary the sentinels name then, if that is another node.
    /// On the primary's own connection, which never reads the element it waits for.
    public func waitForListElement(_ key: String, timeoutSeconds: Double) async throws -> Bool {
        try await primaryConnection().waitForListElement(key, timeoutSeconds: timeoutSeconds)
    }

    public func pipeline(_ commands: [[[UInt8]]]) async throws -> [RedisReply] {
        let connection = try await primaryConnection()
        var replies = try await send(commands, on: connection)
        let refused = replies.indices.filter { Self.isReadOnly(replies[$0]) }
        guard !refused.isEmpty else { return replies }
        state.withLock { $0.stale = true }
        let fresh = try await primaryConnection()
        guard fresh !== connection else { return replies }
        let again = try await send(refused.map { commands[$0] }, on: fresh)
        for (index, reply) in zip(refused, again) { replies[index] = reply }
        return replies
    }

    public func interrupt() {
        state.withLock { state in
            state.connection?.interrupt()
            state.sentinelConnections.values.forEach { $0.interrupt() }
        }
    }

    public func close() async {
        let connections = state.withLock { state -> [RedisConnection] in
            let all = [state.connection].compactMap { $0 } + Array(state.sentinelConnections.values)
            state.connection = nil
            state.sentinelConnections = [:]
            return all
        }
        for connection in connections { await connection.close() }
    }

    private func send(_ commands: [[[UInt8]]], on connection: RedisConnection) async throws -> [RedisReply] {
        do {
            return try await connection.pipeline(commands)
        } catch {
            // The primary may have died: ask the sentinels before the next command.
            state.withLock { $0.stale = true }
            throw error
        }
    }

    static func isReadOnly(_ reply: RedisReply) -> Bool {
        if case .error(let text) = reply { return text.hasPrefix("READONLY") }
        return false
    }

    // MARK: asking the sentinels

    /// The connection to the primary the sentinels name now (asked when stale or due).
    private func primaryConnection() async throws -> RedisConnection {
        let now = ContinuousClock.now
        let current = state.withLock { state -> RedisConnection? in
            let due = state.stale || state.askedAt.map { now - $0 >= refreshInterval } ?? true
            return due ? nil : state.connection
        }
        if let current { return current }
        let address = try await askSentinels()
        let (connection, replaced, previous) = state.withLock { state -> (RedisConnection, RedisConnection?, String?) in
            let previous = state.primary
            if let existing = state.connection, previous == "\(address.host):\(address.port)" { return (existing, nil, previous) }
            var url = template
            url.host = address.host
            url.port = address.port
            let fresh = RedisConnection(url: url, name: "\(name)-primary", caFile: caFile, socketTimeout: socketTimeout)
            let replaced = state.connection
            state.connection = fresh
            state.primary = "\(address.host):\(address.port)"
            return (fresh, replaced, previous)
        }
        if let replaced {
            logger.warning("Redis Sentinel names another primary; reconnecting", metadata: [
                "connection": "\(name)", "master": "\(master)", "primary": "\(address.host):\(address.port)", "was": "\(previous ?? "")",
            ])
            PushMetrics.shared.redisReconnects.increment()
            await replaced.close()
        }
        // Checked every time the sentinels were asked, not only for a node met for the first time: the same
        // address may be a replica now (demoted, or restarted as one; after a connection error this is a new
        // socket), and one whose check failed is named again until the sentinels decide. One more round trip
        // per ask: after an error, a READONLY, or once a second.
        let role = try await send([[Array("ROLE".utf8)]], on: connection)[0]
        guard role.array?.first?.string == "master" else {
            state.withLock { $0.stale = true }
            throw RedisError.connection("\(address.host):\(address.port), named by Redis Sentinel for \(master), is not a primary (yet)")
        }
        state.withLock { state in
            state.stale = false
            state.askedAt = now
        }
        return connection
    }

    /// The primary's address from the first sentinel that knows it.
    private func askSentinels() async throws -> (host: String, port: Int) {
        var problems: [String] = []
        for sentinel in sentinels {
            let key = "\(sentinel.host):\(sentinel.port)"
            let connection = state.withLock { state -> RedisConnection in
                if let existing = state.sentinelConnections[key] { return existing }
                // Sentinels are reached with redis.url's TLS, without its password and database (theirs differ):
                // with redis.sentinel's credentials, which RedisConnection sends with AUTH on every connect.
                var url = RedisURL(host: sentinel.host, port: sentinel.port)
                url.tls = template.tls
                url.username = sentinelPassword == nil ? nil : sentinelUsername
                url.password = sentinelPassword
                let fresh = RedisConnection(url: url, name: "\(name)-sentinel", caFile: caFile, socketTimeout: socketTimeout)
                state.sentinelConnections[key] = fresh
                return fresh
            }
            do {
                let reply = try await connection.pipeline([["SENTINEL", "get-master-addr-by-name", master].map { Array($0.utf8) }])[0]
                if let fields = reply.array, fields.count == 2, let host = fields[0].string, let port = fields[1].string.flatMap({ Int($0) }) {
                    return (host, port)
                }
                problems.append("\(key): \(Self.describe(reply))")
            } catch {
                problems.append("\(key): \(error)\(Self.isAuthError("\(error)") ? Self.credentialsHint : "")")
            }
        }
        throw RedisError.connection("no sentinel names a primary for \(master) (\(problems.joined(separator: "; ")))")
    }

    private static func describe(_ reply: RedisReply) -> String {
        switch reply {
        case .null: return "master name unknown"
        case .error(let text): return Printable.clipped(text, to: 200) + (isAuthError(text) ? credentialsHint : "")
        default: return "unexpected reply"
        }
    }

    /// A sentinel that wants a password (NOAUTH) or refused the one given (WRONGPASS, an AUTH error): the
    /// problem is the sentinels' own credentials, which people easily mistake for redis.url's.
    private static func isAuthError(_ text: String) -> Bool {
        text.contains("NOAUTH") || text.contains("WRONGPASS") || text.contains("AUTH:")
    }

    private static let credentialsHint = " (the sentinels' own credentials: redis.sentinel.password and redis.sentinel.username; redis.url's are the data nodes')"
}
