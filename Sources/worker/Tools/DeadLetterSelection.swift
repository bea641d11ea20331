import ArgumentParser
import Foundation

/// Which dead letters a command selects: docs/tools.md's SELECTION, the same for `dlq stats`, `list`, `replay`,
/// `purge` and `export`. `--max` caps the selected entries in the order the command walks them (`list` and
/// `stats`: newest first; `replay`, `purge`, `export`: oldest first).
struct DeadLetterSelection: ParsableArguments {
    @Option(name: .long, help: "Only this reason (repeatable).") var reason: [String] = []
    @Option(name: .long, help: "Only this HTTP status.") var status: Int?
    @Option(name: .long, help: "Only this topic.") var topic: String?
    @Option(name: .long, help: "Only the message with this id.") var messageId: String?
    @Option(name: .long, help: "Only entries older than this (30s, 10m, 2h, 7d).") var olderThan: String?
    @Option(name: .long, help: "Only entries newer than this (30s, 10m, 2h, 7d).") var newerThan: String?
    @Option(name: .long, help: "At most this many entries.") var max: Int?

    func validate() throws {
        for text in [olderThan, newerThan].compactMap({ $0 }) where Self.millis(text) == nil {
            throw ValidationError("'\(text)' is not a duration like 30s, 10m, 2h or 7d")
        }
        if let max, max < 1 { throw ValidationError("--max must be at least 1") }
    }

    /// This selection with `--max` lowered to `remaining` (shards walked one after another share one `--max`;
    /// without `--max`, unchanged).
    func sharing(_ remaining: Int) -> DeadLetterSelection {
        guard max != nil else { return self }
        var copy = self
        copy.max = Swift.max(0, remaining)
        return copy
    }

    static func millis(_ text: String) -> Int64? {
        guard let unit = text.last, let number = Int64(text.dropLast()), number >= 0, number < 1_000_000_000 else { return nil }
        switch unit {
        case "s": return number * 1000
        case "m": return number * 60_000
        case "h": return number * 3_600_000
        case "d": return number * 86_400_000
        default: return nil
        }
    }

    func matches(_ letter: DeadLetter, now: Int64) -> Bool {
        if !reason.isEmpty && !reason.contains(letter.reason) { return false }
        if let status, letter.status != Int64(status) { return false }
        if let topic, letter.topic != topic { return false }
        if let messageId, letter.messageID != messageId { return false }
        let age = now - (letter.failedAt ?? now)
        if let olderThan, let limit = Self.millis(olderThan), age < limit { return false }
        if let newerThan, let limit = Self.millis(newerThan), age > limit { return false }
        return true
    }

    var summary: String {
        var parts: [String] = reason.map { "--reason \($0)" }
        if let status { parts.append("--status \(status)") }
        if let topic { parts.append("--topic \(topic)") }
        if let messageId { parts.append("--message-id \(messageId)") }
        if let olderThan { parts.append("--older-than \(olderThan)") }
        if let newerThan { parts.append("--newer-than \(newerThan)") }
        if let max { parts.append("--max \(max)") }
        return parts.isEmpty ? "(all)" : parts.joined(separator: " ")
    }
}
