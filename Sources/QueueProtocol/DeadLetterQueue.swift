import RedisClient

/// Operations on the dead-letter list that must be atomic: a replayed entry leaves `push:dlq` exactly when
/// its message enters `push:queue`.
public struct DeadLetterQueue: Sendable {
    public let keys: RedisKeys
    private let scripts: ScriptRunner

    public init(connection: any RedisCommands, keys: RedisKeys) {
        self.keys = keys
        self.scripts = ScriptRunner(connection: connection)
    }

    /// Removes this exact entry (searching from the oldest end) and, only if it was still there, LPUSHes
    /// `message` onto the queue. False if the entry was gone (a concurrent replay or purge took it).
    public func replay(entry: [UInt8], message: [UInt8]) async throws -> Bool {
        let reply = try await scripts.run(Self.replayScript, keys: [keys.deadLetters, keys.queue], arguments: [entry, message])
        return reply.integer == 1
    }

    /// KEYS: dlq, queue. ARGV: the entry, the message to enqueue.
    static let replayScript = Script(name: "replay", source: """
    if redis.call('LREM', KEYS[1], -1, ARGV[1]) == 1 then
      redis.call('LPUSH', KEYS[2], ARGV[2])
      return 1
    end
    return 0
    """)
}
