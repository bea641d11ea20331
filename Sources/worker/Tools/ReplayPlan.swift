import Foundation
import PushCore
import QueueProtocol
import RedisClient

/// What a replay does with each dead letter of one shard: the plan (`--dry-run`) and the run walk the list
/// the same way, oldest first, a page at a time, and decide each entry the same way.
struct ReplayPlan {
    var toReplay = 0
    var byReason: [String: Int] = [:]
    var byTopic: [String: Int] = [:]
    /// Why entries are left in the list, with counts.
    var skipped: [String: Int] = [:]
    var droppedTokens = 0
    /// Entries the selection took (replayed or skipped), counted against `--max`.
    var selected: Int { toReplay + skipped.values.reduce(0, +) }

    enum Decision {
        case replay(message: [UInt8], droppedTokens: Int)
        case skip(String)
    }

    static let page = 1000

    /// Tokens `push:feedback` says the backend must stop using, normalized.
    static func deadTokens(_ keys: RedisKeys, _ redis: any RedisCommands) async throws -> Set<String> {
        var tokens = Set<String>()
        var start = 0
        while true {
            let items = try await redis.execute(["LRANGE", keys.feedback, String(start), String(start + page - 1)]).array ?? []
            for item in items {
                if let token = (try? JSONParser.parse(item.bytes ?? []))?["token"]?.stringValue {
                    tokens.insert(DeviceToken.normalize(token) ?? token)
                }
            }
            if items.count < page { return tokens }
            start += page
        }
    }

    static func decide(_ letter: DeadLetter, deadTokens: Set<String>, includePermanent: Bool, nowSeconds: Int64) -> Decision {
        if DLQReplay.isPermanent(letter.reason, provider: letter.provider) && !includePermanent { return .skip("permanent (\(letter.reason))") }
        guard let message = letter.record?["message"], var members = message.objectMembers else {
            // Only an element that never parsed (Malformed, PoisonMessage) has no message: it goes back as it was,
            // byte for byte from `raw_base64` when it was not UTF-8 (`raw` then holds U+FFFD in place of bytes).
            if let encoded = letter.record?["raw_base64"]?.stringValue, let bytes = Data(base64Encoded: encoded) {
                return .replay(message: Array(bytes), droppedTokens: 0)
            }
            guard let raw = letter.record?["raw"]?.stringValue else { return .skip("unreadable entry") }
            return .replay(message: Array(raw.utf8), droppedTokens: 0)
        }
        if let expiration = message["expiration"]?.exactInteger, expiration > 0, expiration < nowSeconds {
            return .skip("expired")
        }
        let tokens = message["tokens"]?.arrayValue?.compactMap(\.stringValue) ?? []
        let alive = tokens.filter { !deadTokens.contains(DeviceToken.normalize($0) ?? $0) }
        if alive.isEmpty { return .skip("every token is dead (push:feedback)") }
        members.removeAll { $0.key == "tokens" }
        members.append(JSONMember(key: "tokens", value: .array(alive.map { .string($0) })))
        return .replay(message: JSONWriter.canonical(.object(members)), droppedTokens: tokens.count - alive.count)
    }

    /// Reads the shard's dead letters present at `startedAt`, oldest first, changing nothing (the plan, the
    /// purge's count). `body` returns whether it removed the entry from the list (so the walk's position stays
    /// right). Stops after `max` selected entries.
    static func walk(_ keys: RedisKeys, _ redis: any RedisCommands, selection: DeadLetterSelection, startedAt: Int64,
                     _ body: (DeadLetter, Bool) async throws -> Bool) async throws {
        let present = Int(try await redis.execute(["LLEN", keys.deadLetters]).integer ?? 0)
        var examined = 0
        var kept = 0
        var selected = 0
        while examined < present {
            let items = try await redis.execute(["LRANGE", keys.deadLetters, String(-(kept + page)), String(-(kept + 1))]).array ?? []
            if items.isEmpty { return }
            var removedAny = false
            for item in items.reversed() {
                guard examined < present else { return }
                examined += 1
                let letter = DeadLetter(index: -1, shard: keys.prefix, bytes: item.bytes ?? [])
                // The set is fixed at start: an entry that failed after the run began is not part of it.
                if let failedAt = letter.failedAt, failedAt > startedAt { return }
                let isSelected = selection.matches(letter, now: startedAt) && selected < (selection.max ?? Int.max)
                if isSelected { selected += 1 }
                if try await body(letter, isSelected) { removedAny = true } else { kept += 1 }
            }
            if items.count < page && !removedAny { return }
        }
    }

    static func make(keys: RedisKeys, redis: any RedisCommands, selection: DeadLetterSelection, includePermanent: Bool,
                     startedAt: Int64) async throws -> ReplayPlan {
        let dead = try await deadTokens(keys, redis)
        var plan = ReplayPlan()
        try await walk(keys, redis, selection: selection, startedAt: startedAt) { letter, selected in
            guard selected else { return false }
            switch decide(letter, deadTokens: dead, includePermanent: includePermanent, nowSeconds: startedAt / 1000) {
            case .replay(_, let dropped):
                plan.toReplay += 1
                plan.byReason[letter.reason, default: 0] += 1
                plan.byTopic[letter.topic ?? "(unparsed)", default: 0] += 1
                plan.droppedTokens += dropped
            case .skip(let why):
                plan.skipped[why, default: 0] += 1
            }
            return false
        }
        return plan
    }

    /// Replays what the plan selects; returns how many moved (a concurrent replay may have taken others).
    static func execute(keys: RedisKeys, redis: any RedisCommands, selection: DeadLetterSelection, includePermanent: Bool,
                        startedAt: Int64, rate: Double?, to lane: Lane = .chat, progress: inout Progress) async throws -> Int {
        let dead = try await deadTokens(keys, redis)
        return try await consume(keys, redis, selection: selection, startedAt: startedAt, rate: rate, to: lane,
                                 progress: &progress) { letter, selected in
            guard selected, case .replay(let message, _) = decide(letter, deadTokens: dead, includePermanent: includePermanent,
                                                                   nowSeconds: startedAt / 1000) else { return .keep }
            return .replay(message)
        }
    }

    /// Walks the shard's dead letters present at `startedAt`, oldest first, a page at a time; `action` decides
    /// each entry (`selected`: it matches the selection, within `--max`). Each page leaves the list in one
    /// script (`DeadLetterQueue.process(page:)`), kept entries waiting in the hold list until the walk ends, so
    /// the run costs Redis O(entries walked) whatever it keeps. Entries an interrupted run left in the hold go
    /// back first. Returns how many entries were replayed or deleted.
    static func consume(_ keys: RedisKeys, _ redis: any RedisCommands, selection: DeadLetterSelection, startedAt: Int64,
                        rate: Double? = nil, to lane: Lane = .chat, progress: inout Progress,
                        action: (DeadLetter, Bool) -> DeadLetterQueue.PageAction) async throws -> Int {
        let queue = DeadLetterQueue(connection: redis, keys: keys)
        try await queue.restoreHeld()
        do {
            let done = try await walkPages(keys, redis, queue, selection: selection, startedAt: startedAt, rate: rate, to: lane,
                                           progress: &progress, action: action)
            try await queue.restoreHeld()
            return done
        } catch {
            _ = try? await queue.restoreHeld()
            throw error
        }
    }

    private static func walkPages(_ keys: RedisKeys, _ redis: any RedisCommands, _ queue: DeadLetterQueue,
                                  selection: DeadLetterSelection, startedAt: Int64, rate: Double?, to lane: Lane,
                                  progress: inout Progress,
                                  action: (DeadLetter, Bool) -> DeadLetterQueue.PageAction) async throws -> Int {
        let present = Int(try await redis.execute(["LLEN", keys.deadLetters]).integer ?? 0)
        // Paced, a page holds a tenth of a second's worth, so the pace holds within that.
        let pageSize = rate.map { max(1, min(100, Int($0 / 10))) } ?? 100
        let clock = ContinuousClock.now
        var examined = 0
        var selected = 0
        var done = 0
        while examined < present {
            let want = min(pageSize, present - examined)
            let items = try await redis.execute(["LRANGE", keys.deadLetters, String(-want), "-1"]).array ?? []
            if items.isEmpty { break }
            var page: [(entry: [UInt8], action: DeadLetterQueue.PageAction)] = []
            var selectedInPage = 0
            var reachedNewer = false
            for item in items.reversed() {
                let letter = DeadLetter(index: -1, shard: keys.prefix, bytes: item.bytes ?? [])
                // The set is fixed at start: an entry that failed after the run began is not part of it.
                if let failedAt = letter.failedAt, failedAt > startedAt {
                    reachedNewer = true
                    break
                }
                let isSelected = selection.matches(letter, now: startedAt) && selected + selectedInPage < (selection.max ?? Int.max)
                if isSelected { selectedInPage += 1 }
                page.append((letter.bytes, action(letter, isSelected)))
            }
            if page.isEmpty { break }
            if let rate {
                // Paced against the start, so the average holds whatever each call takes.
                let due = clock + .milliseconds(Int64(Double(done) / rate * 1000))
                if due > ContinuousClock.now { try await Task.sleep(until: due) }
            }
            guard let count = try await queue.process(page: page, to: lane) else {
                continue  // the tail changed under us (a concurrent replay or purge): read it again
            }
            examined += page.count
            selected += selectedInPage
            done += count
            progress.advance(count)
            if reachedNewer { break }
        }
        return done
    }

    func describe(prefix: String, json: Bool) -> String {
        if json {
            func counts(_ map: [String: Int]) -> JSONValue { ToolOutput.object(map.mapValues { ToolOutput.number($0) }) }
            return ToolOutput.json(ToolOutput.object([
                "shard": .string(prefix), "to_replay": ToolOutput.number(toReplay), "by_reason": counts(byReason),
                "by_topic": counts(byTopic), "skipped": counts(skipped), "dead_tokens_dropped": ToolOutput.number(droppedTokens),
            ]))
        }
        // Reasons and topics come from the records: escaped, as in `dlq list` and `dlq stats`.
        var lines = ["\(Printable.escaped(prefix)):dlq  to replay: \(toReplay) (dead tokens dropped from them: \(droppedTokens))"]
        for (title, map) in [("by reason", byReason), ("by topic", byTopic), ("skipped", skipped)] where !map.isEmpty {
            lines.append(title)
            for (key, count) in map.sorted(by: { ($1.value, $0.key) < ($0.value, $1.key) }) { lines.append("  \(String(count).leftPadded(7))  \(Printable.escaped(key))") }
        }
        return lines.joined(separator: "\n")
    }
}
