import Foundation

/// The JSON documents of SPEC section 3 (dead letter, feedback, filtered). Field names are public API.
public enum OutcomeRecords {
    public static func deadLetter(raw: [UInt8], failedTokens: [String]?, reason: String, status: Int?,
                                  attempts: Int, failedAtMillis: Int64, worker: String) -> [UInt8] {
        var record: [String: Any] = [
            "reason": reason,
            "status": status.map { $0 as Any } ?? NSNull(),
            "attempts": attempts,
            "failed_at": failedAtMillis,
            "worker": worker,
        ]
        if var message = (try? JSONSerialization.jsonObject(with: Data(raw))) as? [String: Any] {
            if let failedTokens { message["tokens"] = failedTokens }
            record["message"] = message
        } else {
            record["message"] = NSNull()
            record["raw"] = String(decoding: raw, as: UTF8.self)
        }
        return encode(record)
    }

    public static func feedback(token: String, topic: String, reason: String, timestampMillis: Int64,
                                messageID: String) -> [UInt8] {
        encode(["token": token, "topic": topic, "reason": reason, "timestamp": timestampMillis, "message_id": messageID])
    }

    public static func filtered(messageID: String, topic: String, matched: String, filteredAtMillis: Int64) -> [UInt8] {
        encode(["message_id": messageID, "topic": topic, "matched": matched, "filtered_at": filteredAtMillis])
    }

    private static func encode(_ object: [String: Any]) -> [UInt8] {
        // Only strings, numbers, null and parsed JSON go in, so serialization cannot fail.
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
        return Array(data)
    }
}

public enum WallClock {
    public static func nowMillis() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }
    public static func nowSeconds() -> Int64 { Int64(Date().timeIntervalSince1970) }
}
