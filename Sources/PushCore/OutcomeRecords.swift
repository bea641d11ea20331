import Foundation

/// The JSON documents of SPEC section 3 (dead letter, feedback, filtered). Field names are public API.
public enum OutcomeRecords {
    /// - Parameter raw: the element exactly as claimed. If it parses (within `maxDepth`), `message` is that
    ///   object with `tokens` replaced by `failedTokens`; otherwise `message` is null and `raw` holds the
    ///   element as text, plus `raw_base64` when it is not valid UTF-8, so not one byte of it is lost.
    ///   A message with `"provider": "fcm"` gives the record `"provider": "fcm"` too (SPEC section 3), whoever
    ///   writes it and whatever the reason, malformed messages included.
    public static func deadLetter(raw: [UInt8], failedTokens: [String]?, reason: String, status: Int?,
                                  attempts: Int, failedAtMillis: Int64, worker: String,
                                  maxDepth: Int = JSONParser.defaultMaxDepth) -> [UInt8] {
        var record: [JSONMember] = [
            JSONMember(key: "reason", value: .string(reason)),
            JSONMember(key: "status", value: status.map { .number(String($0)) } ?? .null),
            JSONMember(key: "attempts", value: .number(String(attempts))),
            JSONMember(key: "failed_at", value: .number(String(failedAtMillis))),
            JSONMember(key: "worker", value: .string(worker)),
        ]
        if let parsed = try? JSONParser.parse(raw, maxDepth: maxDepth), var members = parsed.objectMembers {
            if members.contains(where: { $0.key == "provider" && $0.value == .string(PushProvider.fcm.rawValue) }) {
                record.append(JSONMember(key: "provider", value: .string(PushProvider.fcm.rawValue)))
            }
            if let failedTokens {
                members.removeAll { $0.key == "tokens" }
                members.append(JSONMember(key: "tokens", value: .array(failedTokens.map { .string($0) })))
            }
            record.append(JSONMember(key: "message", value: .object(members)))
        } else {
            record.append(JSONMember(key: "message", value: .null))
            record.append(JSONMember(key: "raw", value: .string(String(decoding: raw, as: UTF8.self))))
            if String(validating: raw, as: UTF8.self) == nil {
                record.append(JSONMember(key: "raw_base64", value: .string(Data(raw).base64EncodedString())))
            }
        }
        return JSONWriter.canonical(.object(record))
    }

    /// An FCM token's entry has `"provider": "fcm"` (SPEC section 3); an APNs token's has no `provider`, as before.
    public static func feedback(token: String, topic: String, reason: String, timestampMillis: Int64,
                                messageID: String, provider: PushProvider = .apns) -> [UInt8] {
        var members = [
            JSONMember(key: "token", value: .string(token)),
            JSONMember(key: "topic", value: .string(topic)),
            JSONMember(key: "reason", value: .string(reason)),
            JSONMember(key: "timestamp", value: .number(String(timestampMillis))),
            JSONMember(key: "message_id", value: .string(messageID)),
        ]
        if provider != .apns { members.append(JSONMember(key: "provider", value: .string(provider.rawValue))) }
        return JSONWriter.canonical(.object(members))
    }

    /// An FCM message's entry has `"provider": "fcm"`, as its feedback and dead letters do.
    public static func filtered(messageID: String, topic: String, matched: String, filteredAtMillis: Int64,
                                provider: PushProvider = .apns) -> [UInt8] {
        var members = [
            JSONMember(key: "message_id", value: .string(messageID)),
            JSONMember(key: "topic", value: .string(topic)),
            JSONMember(key: "matched", value: .string(matched)),
            JSONMember(key: "filtered_at", value: .number(String(filteredAtMillis))),
        ]
        if provider != .apns { members.append(JSONMember(key: "provider", value: .string(provider.rawValue))) }
        return JSONWriter.canonical(.object(members))
    }
}

public enum WallClock {
    public static func nowMillis() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }
    public static func nowSeconds() -> Int64 { Int64(Date().timeIntervalSince1970) }
}
