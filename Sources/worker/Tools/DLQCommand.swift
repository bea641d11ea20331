import ArgumentParser
import Foundation
import PushCore
import QueueProtocol
import RedisClient

/// `worker dlq ...`: the read-only views of the dead-letter list (docs/tools.md). They change nothing.
struct DLQCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dlq",
        abstract: "Look at the dead letters (push:dlq).",
        subcommands: [DLQStats.self, DLQList.self, DLQShow.self, DLQReplay.self, DLQPurge.self, DLQExport.self, DLQImport.self]
    )
}

/// One dead letter as read from `push:dlq`; index 0 is the newest (LPUSH).
struct DeadLetter {
    var index: Int
    var shard: String
    var reason: String
    var status: Int64?
    var failedAt: Int64?
    var topic: String?
    var messageID: String?
    /// The provider the record names (none: the default provider, `PushProvider.default`).
    var provider: String?
    var bytes: [UInt8]
    var record: JSONValue?

    init(index: Int, shard: String, bytes: [UInt8]) {
        self.index = index
        self.shard = shard
        self.bytes = bytes
        // A dead letter nests the message one level deeper than a queue element may go.
        let record = try? JSONParser.parse(bytes, maxDepth: JSONParser.defaultMaxDepth + 2)
        self.record = record
        provider = record?["provider"]?.stringValue
        reason = Self.code(of: record?["reason"]?.stringValue ?? "(unreadable)", provider: provider)
        status = record?["status"]?.exactInteger
        failedAt = record?["failed_at"]?.exactInteger
        topic = record?["message"]?["topic"]?.stringValue
        messageID = record?["message"]?["id"]?.stringValue
    }

    var text: String { String(decoding: bytes, as: UTF8.self) }

    /// The reason as a bare code. Dead letters of a provider module's messages written before reasons became codes
    /// could read `"CODE: the service's message"` (an upper-case code): selections, stats and replay see the code
    /// alone, as in newer ones. The default provider's reasons were always bare.
    static func code(of reason: String, provider: String?) -> String {
        guard let provider, provider != PushProvider.default.rawValue, let colon = reason.range(of: ": ") else { return reason }
        let head = reason[..<colon.lowerBound]
        guard !head.isEmpty, head.allSatisfy({ $0 == "_" || ("A"..."Z").contains($0) }) else { return reason }
        return String(head)
    }

    /// Hands a shard's dead letters to `body`, newest first, one page of 1,000 at a time, so memory stays
    /// bounded whatever the list holds; `body` returns false to stop.
    static func forEach(_ keys: RedisKeys, _ redis: any RedisCommands, _ body: (DeadLetter) throws -> Bool) async throws {
        let page = 1000
        var start = 0
        while true {
            let items = try await redis.execute(["LRANGE", keys.deadLetters, String(start), String(start + page - 1)]).array ?? []
            for (offset, item) in items.enumerated() {
                guard try body(DeadLetter(index: start + offset, shard: keys.prefix, bytes: item.bytes ?? [])) else { return }
            }
            if items.count < page { return }
            start += page
        }
    }
}

struct DLQStats: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "stats",
                                                    abstract: "Dead letters counted by reason, status, topic and age; the feedback count.",
                                                    discussion: "With a selection, only the selected dead letters are counted (the feedback count is the whole list's).")
    @OptionGroup var options: ToolOptions
    @OptionGroup var selection: DeadLetterSelection

    func run() async throws {
        let configuration = try options.loadConfiguration()
        var reasons: [String: Int] = [:], statuses: [String: Int] = [:], topics: [String: Int] = [:], ages: [String: Int] = [:]
        var total = 0, feedback = 0
        let now = WallClock.nowMillis()
        let cap = selection.max ?? Int.max
        for (keys, redis) in try options.shards(configuration) {
            try await DeadLetter.forEach(keys, redis) { letter in
                guard total < cap else { return false }
                guard selection.matches(letter, now: now) else { return true }
                total += 1
                reasons[letter.reason, default: 0] += 1
                statuses[letter.status.map(String.init) ?? "none", default: 0] += 1
                topics[letter.topic ?? "(unparsed)", default: 0] += 1
                ages[Self.bucket(now - (letter.failedAt ?? now)), default: 0] += 1
                return true
            }
            feedback += Int(try await redis.execute(["LLEN", keys.feedback]).integer ?? 0)
            await redis.close()
        }
        if options.json {
            func counts(_ map: [String: Int]) -> JSONValue { ToolOutput.object(map.mapValues { ToolOutput.number($0) }) }
            print(ToolOutput.json(ToolOutput.object([
                "dead_letters": ToolOutput.number(total), "feedback": ToolOutput.number(feedback), "by_reason": counts(reasons),
                "by_status": counts(statuses), "by_topic": counts(topics), "by_age": counts(ages),
            ])))
            return
        }
        print("dead letters: \(total)    feedback: \(feedback)")
        for (title, map) in [("by reason", reasons), ("by status", statuses), ("by topic", topics), ("by age", ages)] where !map.isEmpty {
            print(title)
            // Reasons and topics come from the records, which anyone who can write to Redis may craft.
            for (key, count) in map.sorted(by: { ($1.value, $0.key) < ($0.value, $1.key) }) { print("  \(String(count).leftPadded(7))  \(Printable.escaped(key))") }
        }
    }

    static func bucket(_ millis: Int64) -> String {
        switch millis {
        case ..<3_600_000: return "under 1 h"
        case ..<86_400_000: return "1 h to 1 d"
        case ..<604_800_000: return "1 d to 7 d"
        default: return "over 7 d"
        }
    }
}

struct DLQList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "The selected dead letters, newest first (read only).",
                                                    discussion: "Each line: the index `dlq show` takes, age, reason, message id, topic (and shard). Exit 1 when nothing matches.")
    @OptionGroup var options: ToolOptions
    @OptionGroup var selection: DeadLetterSelection
    @Option(name: .long, help: "At most this many lines.") var limit: Int = 50

    func validate() throws {
        if limit < 1 { throw ValidationError("--limit must be at least 1") }
    }

    func run() async throws {
        let configuration = try options.loadConfiguration()
        let now = WallClock.nowMillis()
        // `--max` and `--limit` both cap what is shown here, over all shards together.
        let cap = min(limit, selection.max ?? Int.max)
        var shown: [DeadLetter] = []
        for (keys, redis) in try options.shards(configuration) {
            if shown.count < cap {
                try await DeadLetter.forEach(keys, redis) { letter in
                    guard shown.count < cap else { return false }
                    if selection.matches(letter, now: now) { shown.append(letter) }
                    return true
                }
            }
            await redis.close()
        }
        if options.json {
            for letter in shown { print(letter.text) }
        } else {
            // Every field is printed escaped: a message id or topic holding ESC or CR would otherwise drive the
            // terminal (colours, a cleared screen, a line rewritten). `--json` prints the entries as stored.
            for letter in shown {
                let when = letter.failedAt.map { ToolOutput.age(millis: now - $0) + " ago" } ?? "?"
                let fields = [letter.reason, letter.messageID ?? "-", letter.topic ?? "-"]
                    + (configuration.redis.shards.isEmpty ? [] : [letter.shard])
                print("\(letter.index)  \(when)  " + fields.map(Printable.escaped).joined(separator: "  "))
            }
        }
        if shown.isEmpty { throw ExitCode(1) }
    }
}

struct DLQShow: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "show", abstract: "One dead letter in full, by its index in `dlq list`.",
                                                    discussion: "Non-printable characters are shown as JSON escapes (\\u001b); --json prints the entry byte for byte as stored.")
    @OptionGroup var options: ToolOptions
    @Argument(help: "The index (0 is the newest).") var index: Int

    func run() async throws {
        let configuration = try options.loadConfiguration()
        guard index >= 0 else { throw ValidationError("the index is 0 or more") }
        let (keys, redis) = try options.oneShard(configuration, for: "dlq show")
        let reply = try await redis.execute(["LINDEX", keys.deadLetters, String(index)])
        await redis.close()
        guard let bytes = reply.bytes else {
            FileHandle.standardError.write(Data("no dead letter at index \(index) of \(keys.deadLetters)\n".utf8))
            throw ExitCode(1)
        }
        let text = String(decoding: bytes, as: UTF8.self)
        // For people, escaped the JSON way (still JSON, and nothing a terminal acts on); `--json`, as stored.
        print(options.json ? text : Printable.escapedJSON(text))
    }
}

extension String {
    func leftPadded(_ width: Int) -> String { count >= width ? self : String(repeating: " ", count: width - count) + self }
}
