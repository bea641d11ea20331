import PushCore
import RedisClient

/// Writes the dead tokens that services' receipts report to the feedback list (`push:feedback`), as the pipeline's
/// own feedback entries are written, plus `"source":"receipt"`. Services send a receipt again when they are not sure
/// it arrived, so each is written once: the script sets a marker per receipt (`RedisKeys.receiptSeen`, `SET NX EX`
/// a day) and pushes the entry only if the marker was new, both in one atomic step. With shards, the first shard's
/// keys (a receipt has no message of ours to follow); every key is under its prefix, so the script stays single-slot.
public struct ReceiptFeedback: Sendable {
    /// One dead token to report.
    public struct Entry: Sendable, Equatable {
        public var provider: PushProvider
        public var app: String
        public var token: String
        public var messageID: String
        public var timestampMillis: Int64

        public init(provider: PushProvider, app: String, token: String, messageID: String, timestampMillis: Int64) {
            self.provider = provider
            self.app = app
            self.token = token
            self.messageID = messageID
            self.timestampMillis = timestampMillis
        }
    }

    /// How long a receipt is remembered: vendors retry within minutes to hours.
    public static let rememberSeconds = 86_400
    /// Entries per script call: a big callback costs Redis a few short steps, not one long one.
    static let chunk = 500

    public let connection: any RedisCommands
    public let keys: RedisKeys
    /// `retention.feedback_max` (0: all).
    public let feedbackMax: Int
    private let scripts: ScriptRunner

    public init(connection: any RedisCommands, keys: RedisKeys, feedbackMax: Int = 0) {
        self.connection = connection
        self.keys = keys
        self.feedbackMax = max(0, feedbackMax)
        scripts = ScriptRunner(connection: connection)
    }

    /// Writes the entries not written before; how many were new.
    @discardableResult
    public func write(_ entries: [Entry]) async throws -> Int {
        var added = 0
        var start = 0
        while start < entries.count {
            let part = entries[start..<min(entries.count, start + Self.chunk)]
            start += part.count
            let reply = try await scripts.run(
                Self.script, keys: [keys.feedback] + part.map { keys.receiptSeen(digest: Self.digest($0)) },
                arguments: [Array(String(Self.rememberSeconds).utf8), Array(String(feedbackMax).utf8)] + part.map(Self.record))
            guard case .integer(let count) = reply else { throw RedisError.unexpectedReply("receipt feedback script: \(reply)") }
            added += Int(count)
        }
        return added
    }

    /// What makes two receipts the same receipt; fields separated by a byte no token, topic or id holds in practice.
    static func digest(_ entry: Entry) -> String {
        SHA1.hex(Array([entry.provider.rawValue, entry.app, entry.token, entry.messageID].joined(separator: "\u{0}").utf8))
    }

    static func record(_ entry: Entry) -> [UInt8] {
        OutcomeRecords.feedback(token: entry.token, topic: entry.app, reason: "Unregistered", timestampMillis: entry.timestampMillis,
                                messageID: entry.messageID, provider: entry.provider, source: "receipt")
    }

    /// KEYS: the feedback list, then each entry's marker. ARGV: the markers' lifetime (s), the list's cap (0: none),
    /// then each entry's record. Returns how many entries were pushed.
    static let script = Script(name: "receipt-feedback", source: """
    local pushed = 0
    for i = 2, #KEYS do
      if redis.call('SET', KEYS[i], '1', 'NX', 'EX', ARGV[1]) then
        redis.call('LPUSH', KEYS[1], ARGV[i + 1])
        pushed = pushed + 1
      end
    end
    local cap = tonumber(ARGV[2]) or 0
    if pushed > 0 and cap > 0 then redis.call('LTRIM', KEYS[1], 0, cap - 1) end
    return pushed
    """)
}
