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
        /// Each parked list with its provider, app and class, and why and until when it waits, as the workers that
        /// hold it last said (none: no running worker holds it: its messages go back, or nobody sends for the app).
        var held: [HeldList] = []
    }

    struct HeldList {
        var list: String
        var provider: String
        var app: String
        var messageClass: String
        var messages: Int
        var reason: String?
        var sinceMillis: Int64?
        var untilMillis: Int64?
        var workers: [String]
    }

    /// The largest oldest element whose age is read (inside Redis): the worker's default element limit.
    static let oldestElementBytes = 1 << 20

    /// A reason older than this was left by a worker that is gone (each worker refreshes its own every 10 s).
    static let reasonLifetimeMillis: Int64 = 30_000

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
            ["LLEN", keys.queue], QueuedAge.oldestCommand(list: keys.queue, maxElementBytes: Self.oldestElementBytes),
            ["ZRANGE", keys.workers, "0", "-1", "WITHSCORES"],
            ["LLEN", keys.deadLetters], ["LLEN", keys.feedback], ["LLEN", keys.filtered], ["LLEN", keys.deadLetterHold],
            ["LLEN", keys.bulkQueue], QueuedAge.oldestCommand(list: keys.bulkQueue, maxElementBytes: Self.oldestElementBytes),
        ].map { $0.map { Array($0.utf8) } })
        for case .error(let text) in replies { throw RedisError.server(text) }
        func age(_ reply: RedisReply) -> Int64? { QueuedAge.millis(enqueuedAt: reply, nowMillis: now) }
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
        status.parked = try await Self.parkedLists(keys, redis)
        status.held = try await heldLists(status.parked, keys, redis, now: now)
        return status
    }

    /// The parked lists with what the workers that hold them say (`RedisKeys.parkedReasons`).
    private func heldLists(_ parked: [(list: String, messages: Int)], _ keys: RedisKeys, _ redis: any RedisCommands,
                           now: Int64) async throws -> [HeldList] {
        let flat = (try await redis.execute(["HGETALL", keys.parkedReasons]).array ?? []).compactMap(\.bytes)
        var reasons: [String: [JSONValue]] = [:]
        for index in stride(from: 0, to: flat.count - 1, by: 2) {
            guard let entry = try? JSONParser.parse(flat[index + 1]), let list = entry["list"]?.stringValue,
                  let seen = entry["seen_ms"]?.exactInteger, now - seen < Self.reasonLifetimeMillis else { continue }
            reasons[list, default: []].append(entry)
        }
        return parked.map { list in
            let (provider, app, messageClass) = Self.parse(parkedList: list.list, keys)
            let entries = reasons[list.list] ?? []
            let first = entries.first
            return HeldList(list: list.list, provider: first?["provider"]?.stringValue ?? provider, app: first?["app"]?.stringValue ?? app,
                            messageClass: first?["class"]?.stringValue ?? messageClass, messages: list.messages,
                            reason: first?["reason"]?.stringValue, sinceMillis: entries.compactMap { $0["since_ms"]?.exactInteger }.min(),
                            untilMillis: entries.compactMap { $0["until_ms"]?.exactInteger }.max(),
                            workers: entries.compactMap { $0["worker"]?.stringValue }.sorted())
        }
    }

    /// `<prefix>:parked:<provider>:<topic>[:system|:bulk]` -> its provider, app and class.
    static func parse(parkedList key: String, _ keys: RedisKeys) -> (provider: String, app: String, messageClass: String) {
        let head = keys.prefix + ":parked:"
        guard key.hasPrefix(head) else { return ("", "", "") }
        var rest = String(key.dropFirst(head.count))
        var messageClass = MessageClass.chat
        for suffix in [MessageClass.system, .bulk] where rest.hasSuffix(":" + suffix.rawValue) {
            messageClass = suffix
            rest = String(rest.dropLast(suffix.rawValue.count + 1))
        }
        guard let colon = rest.firstIndex(of: ":") else { return (rest, "", messageClass.rawValue) }
        return (String(rest[..<colon]), String(rest[rest.index(after: colon)...]), messageClass.rawValue)
    }

    /// Every parked list of the shard (one SCAN of the keyspace: a tool's look, never the worker's path).
    static func parkedLists(_ keys: RedisKeys, _ redis: any RedisCommands) async throws -> [(list: String, messages: Int)] {
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
        for held in status.held {
            let why: String
            if let reason = held.reason {
                why = "held: \(Printable.clipped(reason, to: 200))"
                    + (held.untilMillis.map { ", until \(ToolOutput.age(millis: max(0, $0 - WallClock.nowMillis()))) from now" } ?? "")
            } else {
                why = "no running worker holds it (its messages go back, or no worker sends for this app)"
            }
            lines.append("\(Printable.clipped(held.list, to: 300))  \(held.messages) parked (\(Printable.escaped(held.provider)) "
                         + "\(Printable.clipped(held.app, to: 200)) \(held.messageClass)): \(why)")
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
            "held": .array(status.held.map { held in
                ToolOutput.object([
                    "list": .string(held.list), "provider": .string(held.provider), "app": .string(held.app),
                    "class": .string(held.messageClass), "messages": ToolOutput.number(held.messages),
                    "reason": held.reason.map(JSONValue.string) ?? .null,
                    "since_ms": held.sinceMillis.map { ToolOutput.number(Int($0)) } ?? .null,
                    "until_ms": held.untilMillis.map { ToolOutput.number(Int($0)) } ?? .null,
                    "workers": .array(held.workers.map(JSONValue.string)),
                ])
            }),
        ])
    }
}
