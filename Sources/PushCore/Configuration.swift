/// The worker's configuration (docs/configuration.md). Key names are public API; every field has the
/// documented default, so an empty file (or none) is a working local setup.
public struct WorkerConfiguration: Sendable, Equatable {
    /// `worker.id`; empty means hostname-pid.
    public var workerID: String = ""
    public var redis = RedisSettings()
    public var collector = CollectorSettings()
    public var recovery = RecoverySettings()
    /// The blocks of the registered providers (docs/architecture.md, "Providers"), by name, as written: each
    /// provider's module reads its own (docs/configuration.md). A block is here, empty, also when the file has none.
    public var providerBlocks: [String: ConfigurationBlock] = [:]
    public var filter = FilterSettings()
    public var retry = RetrySettings()
    public var metricsListen: String = "127.0.0.1:9464"
    /// `receipts.listen`: where the services' delivery reports are received (plain HTTP, `POST /receipts/<provider>`),
    /// a listener apart from the metrics one, since it faces the internet through the operator's TLS proxy; "" is off.
    public var receiptsListen: String = ""
    public var log = LogSettings()
    public var shutdown = ShutdownSettings()
    public var retention = RetentionSettings()

    public init() {}

    /// The topics of the apps configured for `provider` (its block's `<name>.apps`).
    public func appTopics(of provider: PushProvider) -> [String] {
        providerBlocks[provider.rawValue]?.appTopics ?? []
    }
}

public struct RedisSettings: Sendable, Equatable {
    /// The first address of `redis.url`; its password, user, database and TLS apply to every Redis
    /// connection (cluster nodes, the primary Sentinel names).
    public var url = RedisURL()
    /// The further addresses of `redis.url` (nodes of the same Redis Cluster as `url`); only their host and
    /// port are used.
    public var otherNodes: [RedisURL] = []
    /// Every address of `redis.url`, each with `url`'s credentials, database and TLS: any of them that
    /// answers tells a Redis Cluster's topology.
    public var seeds: [RedisURL] {
        [url] + otherNodes.map { node in
            var seed = url
            seed.host = node.host
            seed.port = node.port
            return seed
        }
    }
    /// `redis.sentinel`: when its master is set, the sentinels name the primary and `redis.url`'s host:port
    /// are not used.
    public var sentinel = SentinelSettings()
    public var prefix = "push"
    /// Several key sets (docs/queue-protocol.md), each a prefix with a Redis Cluster hash tag (`push:{0}`); empty:
    /// the one set under `prefix`. The worker consumes from all of them.
    public var shards: [String] = []
    /// The prefixes this worker consumes: `shards`, or `prefix` alone.
    public var prefixes: [String] { shards.isEmpty ? [prefix] : shards }
    /// CA file to verify a `rediss://` server with; empty: the system's CAs.
    public var caFile = ""
    /// Heartbeat key lifetime; a worker silent this long is presumed dead and its claims are returned.
    public var heartbeatTTLMillis = 10_000
    /// `redis.wait_replicas`: after each acknowledgement, wait (Redis `WAIT`) until this many replicas have it,
    /// so that a failover does not undo it (an undone acknowledgement is a duplicate). 0: do not wait.
    public var waitReplicas = 0
    /// `redis.wait_timeout_ms`: the longest one such wait; an acknowledgement not replicated by then stands
    /// (it is counted in `push_redis_wait_shortfalls_total`), it is not retried.
    public var waitTimeoutMillis = 100
    public init() {}

    /// Sets `redis.url` from all its addresses (the first one is `url`).
    public mutating func setAddresses(_ urls: [RedisURL]) {
        guard let first = urls.first else { return }
        url = first
        otherNodes = Array(urls.dropFirst())
    }

    /// Where Redis is, as it may be shown in logs and errors: never the password.
    public var shownAddress: String {
        if sentinel.isEnabled {
            return "sentinel master \(sentinel.master) via \(sentinel.nodes.joined(separator: ",")) (\(url))"
        }
        return RedisURL.describe(seeds)
    }
}

/// `redis.sentinel.*` (docs/configuration.md).
public struct SentinelSettings: Sendable, Equatable {
    /// The name the sentinels monitor; empty: no Sentinel.
    public var master = ""
    /// `host:port` of each sentinel, asked in this order.
    public var nodes: [String] = []
    /// `redis.sentinel.username`: an ACL user of the sentinels; nil authenticates as their default user.
    public var username: String?
    /// `redis.sentinel.password`: the sentinels' own (`requirepass`, or the ACL user's), sent with AUTH to each
    /// sentinel; nil: none. The data nodes' password is in `redis.url`: a sentinel and the nodes it watches
    /// are usually protected apart.
    public var password: Secret?
    public var isEnabled: Bool { !master.isEmpty }
    public init() {}

    /// Host and port of each sentinel (validated by the loader, so none is dropped here in practice).
    public var addresses: [(host: String, port: Int)] {
        nodes.compactMap(Self.split)
    }

    /// `host:port`, `[v6]:port`; nil if it is not that.
    public static func split(_ node: String) -> (host: String, port: Int)? {
        guard let colon = node.lastIndex(of: ":"), let port = Int(node[node.index(after: colon)...]),
              (1...65535).contains(port) else { return nil }
        var host = String(node[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty, !host.contains(where: \.isWhitespace) else { return nil }
        return (host, port)
    }
}

public struct RecoverySettings: Sendable, Equatable {
    /// A message held by this many workers that died is dead-lettered as PoisonMessage, not returned again.
    public var maxDeliveries = 3
    public init() {}
}

public struct BatchBounds: Sendable, Equatable {
    public var `private` = 100
    public var group = 500
    public var system = 100
    public init() {}

    public func bound(for kind: MessageKind) -> Int {
        switch kind {
        case .private: return `private`
        case .group: return group
        case .system: return system
        }
    }
}

public struct CollectorSettings: Sendable, Equatable {
    public var windowMillis = 150
    public var batch = BatchBounds()
    /// Notifications (tokens) the pipeline holds at most; claiming pauses above it.
    public var maxInFlight = 20_000
    /// Bytes of claimed elements the pipeline holds at most; claiming pauses above it.
    public var maxInFlightBytes = 64 << 20
    /// A queue element larger than this is dead-lettered without being parsed.
    public var maxElementBytes = 1_048_576
    /// Of `maxInFlight` (and `maxInFlightBytes`), the most `push:queue:bulk` work may hold while
    /// `push:queue` has work; with none, bulk may use all of it (docs/operations.md).
    public var bulkShare = 0.5
    public init() {}
}

public struct FilterSettings: Sendable, Equatable {
    public var wordsFile = ""
    /// Exceptions: text matched by an entry here is never dropped (`classic` when `*ass*` is listed).
    public var allowFile = ""
    public var fields: [String] = []
    /// How often the words and allow files are checked for changes (SIGHUP checks at once).
    public var reloadIntervalMillis = 2000
    /// How many entries `push:filtered` keeps.
    public var auditCap = 10_000
    public init() {}
}

/// How many entries `push:dlq` and `push:feedback` keep (0: all). Both hold what users wrote and device tokens,
/// personal data an operator may be bound to keep no longer than needed; a cap drops the oldest first, each time
/// a worker writes there.
public struct RetentionSettings: Sendable, Equatable {
    public var deadLettersMax = 0
    public var feedbackMax = 0
    /// Messages a parked list holds at most (0: no cap); past it, what would be parked is a dead letter
    /// `ParkedListFull` (`ParkedLengths`).
    public var parkedMax = 0
    public init() {}
}

public struct RetrySettings: Sendable, Equatable {
    /// With the default delays, 20 attempts span 3 minutes 15 s to 6.4 minutes (about 5 on average): a service's
    /// outage, a burst of 503s or a refused credential of that length dead-letters nothing.
    public var maxAttempts = 20
    public var baseDelayMillis = 200
    public var maxDelayMillis = 30_000
    public init() {}

    /// Exponential backoff with "equal jitter": a uniform delay in [ceiling / 2, ceiling], ceiling =
    /// min(max, base * 2^(attempt-1)). Half of each delay is certain, so the total budget has a floor.
    public func delayMillis(afterAttempt attempt: Int) -> Int {
        Backoff(baseMillis: baseDelayMillis, maxMillis: maxDelayMillis, lowestPercent: 50).delayMillis(attempt: attempt)
    }
}

/// `log.level` and `log.format` (LOG_LEVEL, LOG_FORMAT).
public struct LogSettings: Sendable, Equatable {
    public enum Format: String, Sendable, CaseIterable { case text, json }
    /// trace, debug, info, notice, warning, error, critical (swift-log's levels).
    public var level = "info"
    /// text: one readable line per event; json: one JSON object per line with the same fields, for log pipelines.
    public var format = Format.text
    public static let levels = ["trace", "debug", "info", "notice", "warning", "error", "critical"]
    public init() {}
}

public struct ShutdownSettings: Sendable, Equatable {
    public var timeoutSeconds = 25
    public init() {}
}

public enum ConfigurationError: Error, CustomStringConvertible, Equatable {
    case invalid(key: String, reason: String)
    case unknownKey(String)
    case unreadable(path: String, reason: String)

    public var description: String {
        switch self {
        case .invalid(let key, let reason): return "configuration \(key): \(reason)"
        case .unknownKey(let key): return "configuration: unknown key '\(key)'"
        case .unreadable(let path, let reason): return "configuration file \(path): \(reason)"
        }
    }
}
