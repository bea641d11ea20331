import ArgumentParser
import Foundation
import PushCore
import QueueProtocol
import RedisClient

/// `worker status`: the queue, the workers, and where messages ended, per shard (docs/tools.md).
struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Queue depth and oldest message, each worker's claims and heartbeat, dead workers awaiting recovery, outcome list sizes."
    )

    @OptionGroup var options: ToolOptions
    @Flag(name: .long, help: "Refresh every 2 seconds, like top, until interrupted.") var watch = false

    struct WorkerRow {
        var id: String
        var claims: Int
        var heartbeatAgeMillis: Int64
        var alive: Bool
    }

    struct ShardStatus {
        var prefix: String
        var queued: Int
        var oldestAgeMillis: Int64?
        /// `push:queue:bulk`: its depth and the age of its oldest message (from `enqueued_at`).
        var bulkQueued: Int
        var bulkOldestAgeMillis: Int64?
        var workers: [WorkerRow]
        var deadLetters: Int
        var feedback: Int
        var filtered: Int
        /// Parked lists (isolation) and how many messages each holds: an app that could not send.
        var parked: [(list: String, messages: Int)] = []
    }

    func run() async throws {
        let configuration = try options.loadConfiguration()
        let shards = try options.shards(configuration)
        repeat {
            var statuses: [ShardStatus] = []
            for (keys, redis) in shards { statuses.append(try await status(keys, redis)) }
            if watch { print("\u{1B}[2J\u{1B}[H", terminator: "") }
            print(options.json ? ToolOutput.json(.array(statuses.map(Self.json))) : statuses.map(Self.text).joined(separator: "\n"))
            if watch { try await Task.sleep(for: .seconds(2)) }
        } while watch
        for (_, redis) in shards { await redis.close() }
    }

    private func status(_ keys: RedisKeys, _ redis: any RedisCommands) async throws -> ShardStatus {
        let now = WallClock.nowMillis()
        let replies = try await redis.pipeline([
            ["LLEN", keys.queue], ["LINDEX", keys.queue, "-1"], ["ZRANGE", keys.workers, "0", "-1", "WITHSCORES"],
            ["LLEN", keys.deadLetters], ["LLEN", keys.feedback], ["LLEN", keys.filtered], ["LLEN", keys.deadLetterHold],
            ["LLEN", keys.bulkQueue], ["LINDEX", keys.bulkQueue, "-1"],
        ].map { $0.map { Array($0.utf8) } })
        for case .error(let text) in replies { throw RedisError.server(text) }
        func age(_ reply: RedisReply) -> Int64? {
            guard let element = reply.bytes, let enqueued = (try? JSONParser.parse(element))?["enqueued_at"]?.exactInteger else { return nil }
            return now - enqueued
        }
        let oldest = age(replies[1])
        let flat = (replies[2].array ?? []).compactMap(\.string)
        var workers: [WorkerRow] = []
        for index in stride(from: 0, to: flat.count - 1, by: 2) {
            let id = flat[index]
            let seen = Int64(Double(flat[index + 1]) ?? 0)
            let detail = try await redis.pipeline([["HLEN", keys.processing(worker: id)], ["EXISTS", keys.heartbeat(worker: id)]]
                .map { $0.map { Array($0.utf8) } })
            workers.append(WorkerRow(id: id, claims: Int(detail[0].integer ?? 0), heartbeatAgeMillis: now - seen,
                                     alive: detail[1].integer == 1))
        }
        var status = ShardStatus(prefix: keys.prefix, queued: Int(replies[0].integer ?? 0), oldestAgeMillis: oldest,
                           bulkQueued: Int(replies[7].integer ?? 0), bulkOldestAgeMillis: age(replies[8]), workers: workers,
                           // Dead letters a running replay walked past and keeps (`<prefix>:dlq:hold`) count too.
                           deadLetters: Int(replies[3].integer ?? 0) + Int(replies[6].integer ?? 0), feedback: Int(replies[4].integer ?? 0),
                           filtered: Int(replies[5].integer ?? 0))
        status.parked = try await parkedLists(keys, redis)
        return status
    }

    /// Every parked list of the shard (one SCAN of the keyspace: a tool's look, never the worker's path).
    private func parkedLists(_ keys: RedisKeys, _ redis: any RedisCommands) async throws -> [(list: String, messages: Int)] {
        var cursor = "0"
        var lists: [String] = []
        repeat {
            let reply = try await redis.execute(["SCAN", cursor, "MATCH", keys.parkedPattern, "COUNT", "1000"])
            guard let parts = reply.array, parts.count == 2 else { break }
            cursor = parts[0].string ?? "0"
            lists += (parts[1].array ?? []).compactMap(\.string)
        } while cursor != "0"
        var result: [(list: String, messages: Int)] = []
        for list in Set(lists).sorted() {
            let count = Int(try await redis.execute(["LLEN", list]).integer ?? 0)
            if count > 0 { result.append((list, count)) }
        }
        return result
    }

    /// Worker ids (read from the registry, which anyone who can write to Redis may fill) and the prefix are printed
    /// escaped, so none can send escape sequences to the terminal.
    static func text(_ status: ShardStatus) -> String {
        let prefix = Printable.escaped(status.prefix)
        var lines = ["\(prefix):queue  \(status.queued) queued" + (status.oldestAgeMillis.map { ", oldest \(ToolOutput.age(millis: $0)) old" } ?? ""),
                     "\(prefix):queue:bulk  \(status.bulkQueued) queued"
                        + (status.bulkOldestAgeMillis.map { ", oldest \(ToolOutput.age(millis: $0)) old" } ?? "")]
        let live = status.workers.filter(\.alive)
        let dead = status.workers.filter { !$0.alive }
        lines.append("workers: \(live.count) live, \(dead.count) dead")
        for worker in status.workers.sorted(by: { $0.id < $1.id }) {
            let state = worker.alive ? "live" : (worker.claims > 0 ? "DEAD, claims await recovery" : "dead")
            lines.append("  \(Printable.escaped(worker.id))  \(worker.claims) claimed  heartbeat \(ToolOutput.age(millis: worker.heartbeatAgeMillis)) ago  \(state)")
        }
        for parked in status.parked {
            lines.append("\(Printable.clipped(parked.list, to: 300))  \(parked.messages) parked: its app cannot send now (or no running worker sends for it)")
        }
        lines.append("dead letters \(status.deadLetters)  feedback \(status.feedback)  filtered \(status.filtered)")
        return lines.joined(separator: "\n")
    }

    static func json(_ status: ShardStatus) -> JSONValue {
        ToolOutput.object([
            "prefix": .string(status.prefix), "queued": ToolOutput.number(status.queued),
            "oldest_age_ms": status.oldestAgeMillis.map(ToolOutput.number) ?? .null,
            "bulk_queued": ToolOutput.number(status.bulkQueued),
            "bulk_oldest_age_ms": status.bulkOldestAgeMillis.map(ToolOutput.number) ?? .null,
            "workers": .array(status.workers.map { worker in
                ToolOutput.object(["id": .string(worker.id), "claims": ToolOutput.number(worker.claims),
                                   "heartbeat_age_ms": ToolOutput.number(worker.heartbeatAgeMillis), "alive": .bool(worker.alive)])
            }),
            "dead_workers_with_claims": ToolOutput.number(status.workers.filter { !$0.alive && $0.claims > 0 }.count),
            "dead_letters": ToolOutput.number(status.deadLetters), "feedback": ToolOutput.number(status.feedback),
            "filtered": ToolOutput.number(status.filtered),
            "parked": ToolOutput.object(Dictionary(status.parked.map { ($0.list, ToolOutput.number($0.messages)) }) { first, _ in first }),
        ])
    }
}
