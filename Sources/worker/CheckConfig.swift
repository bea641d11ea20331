import ArgumentParser
import Filter
import Foundation
import PushCore
import ProviderKit
import Pusher
import RedisClient

/// `worker check-config`: loads the configuration and everything it points at, as `worker run` would,
/// and says exactly what is wrong. Exit 0 when all is well, 1 when anything is not (docs/tools.md).
struct CheckConfig: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-config",
        abstract: "Check the configuration: print the effective values (secrets redacted), load every key and certificate, sign a JWT, connect to Redis.",
        discussion: "Exits 0 if everything works, 1 if anything does not (each problem is printed with the key or file it concerns), 2 on bad usage. --json prints one JSON object."
    )

    @Option(name: .long, help: "YAML configuration file.")
    var config: String?

    @Option(name: .long, help: "Connect to this shard only (a prefix of redis.shards); default: every shard.")
    var shard: String?

    @Flag(name: .long, help: "Print one JSON object for scripts: {\"ok\", \"checks\": [{\"name\", \"ok\", \"detail\"}], \"warnings\"}.")
    var json = false

    @Option(name: .long, help: "How long to wait for Redis, in seconds.")
    var redisTimeout: Int = 5

    func run() async throws {
        var checks = ConfigChecks()
        let configuration: WorkerConfiguration
        do {
            configuration = try ConfigurationLoader().load(file: config)
        } catch {
            checks.add("configuration", ok: false, "\(error)")
            return try finish(checks, summary: [])
        }
        let prefixes = try ToolOptions.prefixes(configuration, shard: shard)
        let providers: [any ProviderApps]
        do {
            providers = try Providers.load(configuration)
        } catch {
            checks.add("configuration", ok: false, "\(error)")
            return try finish(checks, summary: [])
        }
        // Keys are read and token endpoints asked (blocking calls): on a thread of their own.
        checks = await OwnThread.run(named: "check-credentials") { [checks] in
            var result = checks
            Self.checkCredentials(providers, &result)
            Self.checkReceipts(configuration, providers, &result)
            return result
        }
        checks.warnings += FilePermissions.warnings(for: configuration)
        checks.warnings += providers.flatMap(\.warnings)
        // Each provider's CA file, then Redis's.
        let caFiles = providers.map { ("\(type(of: $0).provider.rawValue).ca_file", $0.caFile) } + [("redis.ca_file", configuration.redis.caFile)]
        for (key, path) in caFiles where !path.isEmpty {
            let readable = FileManager.default.isReadableFile(atPath: path)
            checks.add(key, ok: readable, "\(path): \(readable ? "readable" : "file not found or not readable")")
        }
        do {
            let filter = try SensitiveWordFilter(settings: configuration.filter)
            if !configuration.filter.wordsFile.isEmpty {
                checks.add("filter.words_file", ok: true,
                           "\(filter.matcher.entries.count) words, filter.allow_file: \(filter.allowed.entries.count) exceptions")
            }
        } catch {
            checks.add("filter", ok: false, "\(error)")
        }
        await checkRedis(configuration, prefixes: prefixes, &checks)
        // The core's blocks, then each provider's, as its module describes them.
        try finish(checks, summary: configuration.summaryLines + providers.flatMap(\.summaryLines))
    }

    /// Every app's credential loaded and used once (a JWT signed), as `worker run` would at start.
    private static func checkCredentials(_ providers: [any ProviderApps], _ checks: inout ConfigChecks) {
        if providers.allSatisfy(\.topics.isEmpty) {
            // Named after the default provider's list (first).
            let lists = Providers.appLists(providers)
            checks.add(lists.first ?? "apps", ok: false, "no app configured (give at least one app in "
                       + lists.joined(separator: ", ") + "; docs/configuration.md)")
        }
        for apps in providers {
            let name = type(of: apps).provider.rawValue
            for (index, result) in apps.checkCredentials().enumerated() {
                checks.add("\(name).apps.\(index) (\(result.app))", ok: result.problem == nil, result.problem ?? result.detail)
            }
        }
    }

    /// `receipts.listen` set: each module's receipt secrets read as `worker run` reads them, and a warning when no app
    /// takes receipts (every callback would be refused).
    private static func checkReceipts(_ configuration: WorkerConfiguration, _ providers: [any ProviderApps], _ checks: inout ConfigChecks) {
        guard !configuration.receiptsListen.isEmpty else { return }
        var readers = 0
        for apps in providers {
            let name = type(of: apps).provider.rawValue
            do {
                guard let reader = try apps.receiptReader() else { continue }
                readers += 1
                checks.add("receipts (\(name))", ok: true, "POST /receipts/\(name) for \(reader.apps.joined(separator: ", "))")
            } catch {
                checks.add("receipts (\(name))", ok: false, "\(error)")
            }
        }
        if readers == 0 {
            checks.warnings.append("receipts.listen is set, but no app has receipt settings: every callback would be refused (docs/vendors.md, \"Receipts\")")
        }
    }

    /// Connected as the worker connects: through the sentinels, or to each shard's slot in a cluster (each shard
    /// may live on another node). One check per shard when there are several.
    private func checkRedis(_ configuration: WorkerConfiguration, prefixes: [String], _ checks: inout ConfigChecks) async {
        let key = configuration.redis.sentinel.isEnabled ? "redis.sentinel" : "redis.url"
        let timeout = Duration.seconds(max(1, min(redisTimeout, 300)))
        for prefix in prefixes {
            let redis = RedisConnector.connection(configuration.redis, shard: prefix, name: "check", socketTimeout: timeout)
            let name = configuration.redis.prefixes.count > 1 ? "\(key) (shard \(prefix))" : key
            await checks.attempt(name) {
                do {
                    _ = try await redis.execute(["PING"])
                } catch {
                    throw Failure(description: "\(configuration.redis.shownAddress): \(error)")
                }
                return "\(configuration.redis.shownAddress): connected"
            }
            await redis.close()
        }
    }

    private struct Failure: Error, CustomStringConvertible { let description: String }

    /// Prints the result as asked; exit 1 when any check failed (docs/tools.md).
    private func finish(_ checks: ConfigChecks, summary: [String]) throws {
        print(json ? checks.json : checks.text(summary: summary))
        if !checks.ok { throw ExitCode(1) }
    }
}
