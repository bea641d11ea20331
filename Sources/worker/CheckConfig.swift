import ArgumentParser
import Filter
import Foundation
import PushCore
import Pusher
import RedisClient

/// `worker check-config`: loads the configuration and everything it points at, as `worker run` would,
/// and says exactly what is wrong. Exit 0 when all is well, 1 when anything is not (SPEC section 6).
struct CheckConfig: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-config",
        abstract: "Check the configuration: print the effective values (secrets redacted), load every key and certificate, sign a JWT, connect to Redis.",
        discussion: "Exits 0 if everything works, 1 if anything does not (each problem is printed with the key or file it concerns)."
    )

    @Option(name: .long, help: "YAML configuration file.")
    var config: String?

    @Option(name: .long, help: "How long to wait for Redis, in seconds.")
    var redisTimeout: Int = 5

    func run() async throws {
        let configuration: WorkerConfiguration
        do {
            configuration = try ConfigurationLoader().load(file: config)
        } catch {
            print("FAIL configuration: \(error)")
            throw ExitCode(1)
        }
        configuration.summaryLines.forEach { print($0) }
        print("")
        var failures = 0
        func report(_ ok: Bool, _ line: String) {
            print("\(ok ? "ok  " : "FAIL") \(line)")
            if !ok { failures += 1 }
        }
        if configuration.apns.apps.isEmpty {
            report(false, "apns.apps: no app configured (each needs a topic with key_file or cert_file)")
        }
        for (index, app) in configuration.apns.apps.enumerated() {
            do {
                report(true, "apns.apps.\(index) (\(app.topic)): \(try CredentialCheck.verify(app))")
            } catch {
                report(false, "apns.apps.\(index) (\(app.topic)): \(error)")
            }
        }
        for warning in FilePermissions.warnings(for: configuration) { print("warn \(warning)") }
        for (key, path) in [("apns.ca_file", configuration.apns.caFile), ("redis.ca_file", configuration.redis.caFile)]
        where !path.isEmpty {
            let readable = FileManager.default.isReadableFile(atPath: path)
            report(readable, "\(key) \(path): \(readable ? "readable" : "file not found or not readable")")
        }
        do {
            let filter = try SensitiveWordFilter(settings: configuration.filter)
            if !configuration.filter.wordsFile.isEmpty {
                report(true, "filter.words_file: \(filter.matcher.entries.count) words, filter.allow_file: \(filter.allowed.entries.count) exceptions")
            }
        } catch {
            report(false, "\(error)")
        }
        // Connected as the worker connects: through the sentinels, or to the first shard's slot in a cluster.
        let redis = RedisConnector.connection(configuration.redis, shard: configuration.redis.prefixes[0], name: "check",
                                              socketTimeout: .seconds(max(1, min(redisTimeout, 300))))
        let shown = "\(configuration.redis.sentinel.isEnabled ? "redis.sentinel" : "redis.url") \(configuration.redis.shownAddress)"
        do {
            _ = try await redis.execute(["PING"])
            report(true, "\(shown): connected")
        } catch {
            report(false, "\(shown): \(error)")
        }
        await redis.close()
        print(failures == 0 ? "\nconfiguration OK" : "\n\(failures) problem\(failures == 1 ? "" : "s") found")
        if failures > 0 { throw ExitCode(1) }
    }
}
