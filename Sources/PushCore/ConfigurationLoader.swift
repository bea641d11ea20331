import Foundation
import Yams

/// Reads the YAML file of docs/configuration.md and lets environment variables override each scalar.
/// A key's variable is its path upper-cased with dots and dashes as underscores (`redis.url` -> `REDIS_URL`,
/// `<provider>.apps.0.topic` -> `<PROVIDER>_APPS_0_TOPIC`); the environment wins over the file.
/// The core reads its own blocks; each provider's block is kept as written for its module to read
/// (`ProviderDescription.settingsKeys` and `appKeys` say which keys it has).
public struct ConfigurationLoader: Sendable {
    static let scalarKeys: [String] = [
        "worker.id", "redis.url", "redis.sentinel.master", "redis.sentinel.nodes", "redis.sentinel.username", "redis.sentinel.password", "redis.prefix", "redis.ca_file", "redis.shards", "redis.heartbeat_ttl_ms", "redis.wait_replicas", "redis.wait_timeout_ms",
        "collector.window_ms", "collector.batch.private", "collector.batch.group", "collector.batch.system",
        "collector.max_in_flight", "collector.max_in_flight_bytes", "collector.max_element_bytes", "collector.bulk_share",
        "recovery.max_deliveries",
        "filter.words_file", "filter.allow_file", "filter.fields", "filter.audit_cap", "filter.reload_interval_ms",
        "retry.max_attempts", "retry.base_delay_ms", "retry.max_delay_ms",
        "metrics.listen", "receipts.listen", "log.level", "log.format", "shutdown.timeout_s",
        "retention.dlq_max", "retention.feedback_max", "retention.parked_max",
    ]
    /// The scalar keys of the core's blocks and of every registered provider's block.
    static var allScalarKeys: [String] {
        scalarKeys + PushProvider.modules.flatMap { module in module.description.settingsKeys.map { "\(module.description.name).\($0)" } }
    }
    /// The app lists (their paths and each app's keys): every registered provider's block has one.
    static var allAppLists: [(path: String, keys: [String])] {
        PushProvider.modules.map { ("\($0.description.name).apps", $0.description.appKeys) }
    }

    public var environment: [String: String]

    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.environment = environment
    }

    public func load(file path: String?) throws -> WorkerConfiguration {
        var yaml = ""
        if let path, !path.isEmpty {
            do { yaml = try String(contentsOfFile: path, encoding: .utf8) } catch {
                throw ConfigurationError.unreadable(path: path, reason: "cannot be read (\(error.localizedDescription))")
            }
        }
        return try load(yaml: yaml, origin: path ?? "(defaults)")
    }

    public func load(yaml: String, origin: String = "(inline)") throws -> WorkerConfiguration {
        var values: [String: String] = [:]
        if !yaml.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            let tree: Any?
            do { tree = try Yams.load(yaml: yaml) } catch {
                throw ConfigurationError.unreadable(path: origin, reason: "not valid YAML: \(error)")
            }
            if let tree {
                guard let root = tree as? [String: Any] else {
                    throw ConfigurationError.unreadable(path: origin, reason: "the top level must be a mapping")
                }
                try flatten(root, path: "", into: &values)
            }
        }
        applyEnvironment(to: &values)
        return try build(values)
    }

    private func flatten(_ node: [String: Any], path: String, appLists: [(path: String, keys: [String])] = allAppLists,
                         into values: inout [String: String]) throws {
        for (key, value) in node {
            let full = path.isEmpty ? key : "\(path).\(key)"
            switch value {
            case let map as [String: Any]:
                try flatten(map, path: full, appLists: appLists, into: &values)
            case let list as [Any] where appLists.contains(where: { $0.path == full }):
                for (index, item) in list.enumerated() {
                    guard let app = item as? [String: Any] else {
                        throw ConfigurationError.invalid(key: "\(full).\(index)", reason: "each app must be a mapping")
                    }
                    try flatten(app, path: "\(full).\(index)", appLists: appLists, into: &values)
                }
            case let list as [Any]:
                values[full] = list.map { "\($0)" }.joined(separator: ",")
            case is NSNull:
                values[full] = ""
            default:
                values[full] = "\(value)"
            }
        }
    }

    private func applyEnvironment(to values: inout [String: String]) {
        for key in Self.allScalarKeys {
            if let value = environment[Self.variableName(key)] { values[key] = value }
        }
        for (list, keys) in Self.allAppLists {
            let prefix = Self.variableName(list) + "_"
            let appIndices = Set(values.keys.compactMap { Self.appIndex($0, list: list) }).union(environment.keys.compactMap { name in
                guard name.hasPrefix(prefix) else { return nil }
                return Int(name.dropFirst(prefix.count).prefix { $0.isNumber })
            })
            for index in appIndices {
                for field in keys {
                    let key = "\(list).\(index).\(field)"
                    if let value = environment[Self.variableName(key)] { values[key] = value }
                }
            }
        }
    }

    public static func variableName(_ key: String) -> String {
        key.uppercased().replacingOccurrences(of: ".", with: "_").replacingOccurrences(of: "-", with: "_")
    }

    private static func appIndex(_ key: String, list: String) -> Int? {
        guard key.hasPrefix(list + ".") else { return nil }
        return Int(key.dropFirst(list.count + 1).prefix { $0.isNumber })
    }

    /// Whether `key` is `<list>.<index>.<field>` with a field that list's apps have.
    private static func isAppKey(_ key: String, appLists: [(path: String, keys: [String])]) -> Bool {
        appLists.contains { list, fields in
            guard let index = appIndex(key, list: list), let field = key.split(separator: ".").last.map(String.init) else { return false }
            return fields.contains(field) && key == "\(list).\(index).\(field)"
        }
    }

    private func build(_ values: [String: String]) throws -> WorkerConfiguration {
        let scalarKeys = Set(Self.allScalarKeys)
        let appLists = Self.allAppLists
        for key in values.keys where !scalarKeys.contains(key) {
            guard Self.isAppKey(key, appLists: appLists) else { throw ConfigurationError.unknownKey(key) }
        }
        var config = WorkerConfiguration()
        var reader = Reader(values: values)
        config.workerID = reader.string("worker.id", config.workerID)
        config.redis.setAddresses(try RedisURL.parseList(reader.string("redis.url", "redis://127.0.0.1:6379/0")))
        config.redis.sentinel.master = reader.string("redis.sentinel.master", "").trimmingCharacters(in: .whitespaces)
        config.redis.sentinel.nodes = reader.string("redis.sentinel.nodes", "").split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        for node in config.redis.sentinel.nodes where SentinelSettings.split(node) == nil {
            throw ConfigurationError.invalid(key: "redis.sentinel.nodes", reason: "'\(Printable.clipped(node, to: 80))' is not host:port")
        }
        if config.redis.sentinel.isEnabled != !config.redis.sentinel.nodes.isEmpty {
            throw ConfigurationError.invalid(key: "redis.sentinel", reason: "give both master (the monitored name) and nodes (the sentinels), or neither")
        }
        // The sentinels' own credentials (`requirepass`, an ACL user); the data nodes' stay in redis.url.
        let sentinelUser = reader.string("redis.sentinel.username", "").trimmingCharacters(in: .whitespaces)
        let sentinelPassword = reader.string("redis.sentinel.password", "")
        config.redis.sentinel.username = sentinelUser.isEmpty ? nil : sentinelUser
        config.redis.sentinel.password = sentinelPassword.isEmpty ? nil : Secret(sentinelPassword)
        if config.redis.sentinel.username != nil && config.redis.sentinel.password == nil {
            throw ConfigurationError.invalid(key: "redis.sentinel.username", reason: "needs redis.sentinel.password (the ACL user's password)")
        }
        if config.redis.sentinel.password != nil && !config.redis.sentinel.isEnabled {
            throw ConfigurationError.invalid(key: "redis.sentinel.password", reason: "is for the sentinels, and redis.sentinel.master is not set (the data nodes' password goes in redis.url)")
        }
        config.redis.prefix = reader.string("redis.prefix", config.redis.prefix)
        config.redis.caFile = reader.string("redis.ca_file", "")
        config.redis.shards = reader.string("redis.shards", "").split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        guard config.redis.shards.count <= 64, Set(config.redis.shards).count == config.redis.shards.count else {
            throw ConfigurationError.invalid(key: "redis.shards", reason: "at most 64 distinct prefixes")
        }
        // Several addresses name a Redis Cluster, whose scripts need every key of a set in one slot: only
        // hash-tagged shards do that (the plain prefix's keys hash to different slots).
        if config.redis.seeds.count > 1 && config.redis.shards.isEmpty {
            throw ConfigurationError.invalid(key: "redis.url", reason: "several addresses name a Redis Cluster, which needs redis.shards (hash-tagged prefixes such as push:{0})")
        }
        if config.redis.seeds.count > 1 && config.redis.sentinel.isEnabled {
            throw ConfigurationError.invalid(key: "redis.url", reason: "with redis.sentinel the sentinels name the primary: give one address (for password, database and TLS)")
        }
        if config.redis.prefix.isEmpty { throw ConfigurationError.invalid(key: "redis.prefix", reason: "must not be empty") }
        config.redis.heartbeatTTLMillis = try reader.int("redis.heartbeat_ttl_ms", config.redis.heartbeatTTLMillis, min: 1000)
        config.redis.waitReplicas = try reader.int("redis.wait_replicas", config.redis.waitReplicas, min: 0, max: 64)
        config.redis.waitTimeoutMillis = try reader.int("redis.wait_timeout_ms", config.redis.waitTimeoutMillis, min: 1, max: 60_000)
        config.collector.windowMillis = try reader.int("collector.window_ms", config.collector.windowMillis, min: 0)
        config.collector.batch.private = try reader.int("collector.batch.private", config.collector.batch.private, min: 1)
        config.collector.batch.group = try reader.int("collector.batch.group", config.collector.batch.group, min: 1)
        config.collector.batch.system = try reader.int("collector.batch.system", config.collector.batch.system, min: 1)
        config.collector.maxInFlight = try reader.int("collector.max_in_flight", config.collector.maxInFlight, min: 1)
        config.collector.maxInFlightBytes = try reader.int("collector.max_in_flight_bytes", config.collector.maxInFlightBytes, min: 1 << 20)
        config.recovery.maxDeliveries = try reader.int("recovery.max_deliveries", config.recovery.maxDeliveries, min: 1, max: 1000)
        config.collector.maxElementBytes = try reader.int("collector.max_element_bytes", config.collector.maxElementBytes, min: 1024)
        config.collector.bulkShare = try reader.share("collector.bulk_share", config.collector.bulkShare)

        // Each provider's block as written: its module reads it (its settings are its own types).
        for module in PushProvider.modules {
            config.providerBlocks[module.description.name] = Self.block(module.description.name, of: values)
        }
        config.filter.wordsFile = reader.string("filter.words_file", "")
        config.filter.allowFile = reader.string("filter.allow_file", "")
        config.filter.reloadIntervalMillis = try reader.int("filter.reload_interval_ms", config.filter.reloadIntervalMillis, min: 100)
        config.filter.fields = reader.string("filter.fields", "").split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        config.filter.auditCap = try reader.int("filter.audit_cap", config.filter.auditCap, min: 1)
        config.retention.deadLettersMax = try reader.int("retention.dlq_max", config.retention.deadLettersMax, min: 0)
        config.retention.feedbackMax = try reader.int("retention.feedback_max", config.retention.feedbackMax, min: 0)
        config.retention.parkedMax = try reader.int("retention.parked_max", config.retention.parkedMax, min: 0)
        config.retry.maxAttempts = try reader.int("retry.max_attempts", config.retry.maxAttempts, min: 1)
        config.retry.baseDelayMillis = try reader.int("retry.base_delay_ms", config.retry.baseDelayMillis, min: 0)
        config.retry.maxDelayMillis = try reader.int("retry.max_delay_ms", config.retry.maxDelayMillis, min: config.retry.baseDelayMillis)
        config.metricsListen = reader.string("metrics.listen", config.metricsListen)
        _ = try ListenAddress.parse(config.metricsListen)
        config.receiptsListen = reader.string("receipts.listen", config.receiptsListen).trimmingCharacters(in: .whitespaces)
        _ = try ListenAddress.parse(config.receiptsListen, key: "receipts.listen")
        config.log = try Self.log(&reader)
        config.shutdown.timeoutSeconds = try reader.int("shutdown.timeout_s", config.shutdown.timeoutSeconds, min: 0)
        return config
    }

    /// `log.level` and `log.format`; also read alone (`logSettings()`) to set up logging before the rest loads.
    private static func log(_ reader: inout Reader) throws -> LogSettings {
        var log = LogSettings()
        log.level = reader.string("log.level", log.level).lowercased()
        guard LogSettings.levels.contains(log.level) else {
            throw ConfigurationError.invalid(key: "log.level", reason: "'\(Printable.clipped(log.level, to: 40))' is not one of \(LogSettings.levels.joined(separator: ", "))")
        }
        let format = reader.string("log.format", log.format.rawValue).lowercased()
        guard let parsed = LogSettings.Format(rawValue: format) else {
            throw ConfigurationError.invalid(key: "log.format", reason: "'\(Printable.clipped(format, to: 40))' is not text or json")
        }
        log.format = parsed
        return log
    }

    /// The log settings from the environment alone (LOG_LEVEL, LOG_FORMAT), defaults for what is missing or
    /// wrong: what logs the configuration's own errors.
    public func environmentLogSettings() -> LogSettings {
        var log = LogSettings()
        if let level = environment[Self.variableName("log.level")]?.lowercased(), LogSettings.levels.contains(level) { log.level = level }
        if let format = environment[Self.variableName("log.format")].flatMap({ LogSettings.Format(rawValue: $0.lowercased()) }) { log.format = format }
        return log
    }

    /// The values under `name.`, without that prefix.
    private static func block(_ name: String, of values: [String: String]) -> ConfigurationBlock {
        let prefix = name + "."
        var block = ConfigurationBlock(name: name)
        for (key, value) in values where key.hasPrefix(prefix) { block.values[String(key.dropFirst(prefix.count))] = value }
        return block
    }

    private struct Reader {
        var values: [String: String]

        func string(_ key: String, _ fallback: String) -> String { values[key] ?? fallback }

        /// Every number is bounded above too (by default to 2^31 - 1), so no arithmetic the worker does
        /// with it (backoff doubling, unit conversions) can overflow.
        func int(_ key: String, _ fallback: Int, min: Int, max: Int = Int(Int32.max)) throws -> Int {
            guard let text = values[key] else { return fallback }
            guard let value = Int(text.trimmingCharacters(in: .whitespaces)) else {
                throw ConfigurationError.invalid(key: key, reason: "'\(text)' is not a whole number")
            }
            guard value >= min else { throw ConfigurationError.invalid(key: key, reason: "must be at least \(min)") }
            guard value <= max else { throw ConfigurationError.invalid(key: key, reason: "must be at most \(max)") }
            return value
        }

        /// A share: a number above 0 and at most 1.
        func share(_ key: String, _ fallback: Double) throws -> Double {
            guard let text = values[key] else { return fallback }
            guard let value = Double(text.trimmingCharacters(in: .whitespaces)), value.isFinite else {
                throw ConfigurationError.invalid(key: key, reason: "'\(text)' is not a number")
            }
            guard value > 0 && value <= 1 else { throw ConfigurationError.invalid(key: key, reason: "must be above 0 and at most 1") }
            return value
        }
    }
}
