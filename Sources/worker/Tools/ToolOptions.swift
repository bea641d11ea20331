import ArgumentParser
import Foundation
import PushCore
import QueueProtocol
import RedisClient

/// What every operator tool takes (docs/tools.md): the worker's configuration, a shard, and `--json`.
struct ToolOptions: ParsableArguments {
    @Option(name: .long, help: "YAML configuration file (the worker's; environment variables apply too).")
    var config: String?

    @Option(name: .long, help: "Only this shard (a prefix of redis.shards); default: every shard.")
    var shard: String?

    @Flag(name: .long, help: "Print JSON for scripts instead of text for people.")
    var json = false

    /// The configuration, or exit 2 naming what is wrong.
    func loadConfiguration() throws -> WorkerConfiguration {
        do {
            return try ConfigurationLoader().load(file: config)
        } catch {
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            throw ExitCode(2)
        }
    }

    /// The prefixes the tool works on: `--shard`'s, or every shard's. An unknown `--shard` is bad usage (exit 2).
    func prefixes(_ configuration: WorkerConfiguration) throws -> [String] {
        try Self.prefixes(configuration, shard: shard)
    }

    static func prefixes(_ configuration: WorkerConfiguration, shard: String?) throws -> [String] {
        let prefixes = configuration.redis.prefixes
        guard let shard else { return prefixes }
        guard prefixes.contains(shard) else {
            FileHandle.standardError.write(Data("error: --shard \(shard) is not one of \(prefixes.joined(separator: ", "))\n".utf8))
            throw ExitCode(2)
        }
        return [shard]
    }

    /// One connection per selected shard, each with the shard's key names.
    func shards(_ configuration: WorkerConfiguration) throws -> [(keys: RedisKeys, redis: any RedisCommands)] {
        let prefixes = try prefixes(configuration)
        let redis = configuration.redis
        // One cluster topology for all of them, as in the worker (closed with the last of them).
        let map = RedisConnector.clusterMap(redis, name: "tool-topology")
        return prefixes.map { prefix in
            (RedisKeys(prefix: prefix), RedisConnector.connection(redis, shard: prefix, name: "tool-\(prefix)", map: map))
        }
    }

    /// The one shard a command that addresses a single list works on (`dlq show N`, `dlq import`): `--shard`'s,
    /// or the only one. With several shards and no `--shard` the command is ambiguous: bad usage (exit 2).
    func oneShard(_ configuration: WorkerConfiguration, for command: String) throws -> (keys: RedisKeys, redis: any RedisCommands) {
        try checkOneShard(configuration, for: command)
        guard let first = try shards(configuration).first else { throw ExitCode(2) }
        return first
    }

    /// What `oneShard` checks, without connecting (bad usage is said before any other work).
    func checkOneShard(_ configuration: WorkerConfiguration, for command: String) throws {
        _ = try prefixes(configuration)
        if shard == nil && configuration.redis.prefixes.count > 1 {
            FileHandle.standardError.write(Data("error: \(command) works on one shard: give --shard (one of \(configuration.redis.prefixes.joined(separator: ", ")))\n".utf8))
            throw ExitCode(2)
        }
    }
}

/// Output helpers shared by the tools.
enum ToolOutput {
    /// A JSON document from plain Swift values (strings, integers, arrays, dictionaries), keys sorted.
    static func json(_ value: JSONValue) -> String { String(decoding: JSONWriter.canonical(value), as: UTF8.self) }

    static func object(_ pairs: [String: JSONValue]) -> JSONValue {
        .object(pairs.map { JSONMember(key: $0.key, value: $0.value) })
    }

    static func number(_ value: Int) -> JSONValue { .number(String(value)) }
    static func number(_ value: Int64) -> JSONValue { .number(String(value)) }

    /// "3 s", "5 min", "2 h", "4 d": an age people read at a glance.
    static func age(millis: Int64) -> String {
        let seconds = max(0, millis / 1000)
        switch seconds {
        case ..<120: return "\(seconds) s"
        case ..<7200: return "\(seconds / 60) min"
        case ..<172_800: return "\(seconds / 3600) h"
        default: return "\(seconds / 86_400) d"
        }
    }
}
