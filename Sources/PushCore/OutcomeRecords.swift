import Foundation

/// The JSON documents of docs/redis-keys.md (dead letter, feedback, filtered). Field names are public API.
public enum OutcomeRecords {
    /// A dead letter's record: `DeadLetterEntry.record(element:)`, which builds every dead letter.
    public static func deadLetter(raw: [UInt8], failedTokens: [String]?, reason: String, status: Int?,
                                  attempts: Int, failedAtMillis: Int64, worker: String,
                                  maxDepth: Int = JSONParser.defaultMaxDepth) -> [UInt8] {
        DeadLetterEntry(failedTokens: failedTokens, reason: reason, status: status, attempts: attempts,
                        failedAtMillis: failedAtMillis, worker: worker).record(element: raw, maxDepth: maxDepth)
    }

    /// A token's entry has `"provider": "<name>"` (docs/redis-keys.md), but the default provider's has no `provider`, as before.
    /// `source`: where the worker learned it, when not from a send's answer (`receipt`: a service's delivery report).
    public static func feedback(token: String, topic: String, reason: String, timestampMillis: Int64,
                                messageID: String, provider: PushProvider = .default, source: String? = nil) -> [UInt8] {
        var members = [
            JSONMember(key: "token", value: .string(token)),
            JSONMember(key: "topic", value: .string(topic)),
            JSONMember(key: "reason", value: .string(reason)),
            JSONMember(key: "timestamp", value: .number(String(timestampMillis))),
            JSONMember(key: "message_id", value: .string(messageID)),
        ]
        if provider != .default { members.append(JSONMember(key: "provider", value: .string(provider.rawValue))) }
        if let source { members.append(JSONMember(key: "source", value: .string(source))) }
        return JSONWriter.canonical(.object(members))
    }

    /// A provider module's message's entry has `"provider": "<name>"`, as its feedback and dead letters do.
    public static func filtered(messageID: String, topic: String, matched: String, filteredAtMillis: Int64,
                                provider: PushProvider = .default) -> [UInt8] {
        var members = [
            JSONMember(key: "message_id", value: .string(messageID)),
            JSONMember(key: "topic", value: .string(topic)),
            JSONMember(key: "matched", value: .string(matched)),
            JSONMember(key: "filtered_at", value: .number(String(filteredAtMillis))),
        ]
        if provider != .default { members.append(JSONMember(key: "provider", value: .string(provider.rawValue))) }
        return JSONWriter.canonical(.object(members))
    }
}

public enum WallClock {
    public static func nowMillis() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }
    public static func nowSeconds() -> Int64 { Int64(Date().timeIntervalSince1970) }
}
