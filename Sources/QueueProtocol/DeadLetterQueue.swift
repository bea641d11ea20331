import PushCore
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

    /// What a walk through the dead letters does with one entry.
    public enum PageAction: Sendable {
        /// Leaves the list; this message enters `push:queue`.
        case replay([UInt8])
        /// Leaves the list for good (purge).
        case delete
        /// Stays a dead letter (back at its place when the walk ends).
        case keep
    }

    /// One step of a replay or purge walking the list from its oldest end: the `page` entries at the tail
    /// (oldest first) leave `push:dlq` at once; replayed messages enter `push:queue` (oldest first), deleted ones
    /// are gone, and kept ones go to the hold list (`<prefix>:dlq:hold`), so the next page is again at the tail:
    /// every step costs Redis O(its page), never a search through entries kept earlier. Nil if the tail is no
    /// longer what was read (a concurrent replay or purge changed it): read it again. Otherwise how many entries
    /// were replayed or deleted.
    /// `to`: the input list replayed messages enter (`push:queue`, or `push:queue:bulk`).
    public func process(page: [(entry: [UInt8], action: PageAction)], to lane: Lane = .chat) async throws -> Int? {
        guard !page.isEmpty else { return 0 }
        var arguments: [[UInt8]] = []
        arguments.reserveCapacity(page.count * 2)
        for item in page {
            arguments.append(item.entry)
            switch item.action {
            case .replay(let message): arguments.append([UInt8(ascii: "R")] + message)
            case .delete: arguments.append([UInt8(ascii: "D")])
            case .keep: arguments.append([UInt8(ascii: "K")])
            }
        }
        let reply = try await scripts.run(Self.pageScript, keys: [keys.deadLetters, keys.queue(lane), keys.deadLetterHold],
                                          arguments: arguments)
        guard let count = reply.integer else { throw RedisError.unexpectedReply("dead-letter page: \(reply.shape)") }
        return count < 0 ? nil : Int(count)
    }

    /// Puts the entries a replay kept back at the oldest end of `push:dlq`, in their order. Run at the end of
    /// every replay, and at the start of every replay and purge in case an earlier run was interrupted.
    /// Returns how many were put back.
    @discardableResult
    public func restoreHeld() async throws -> Int {
        var restored = 0
        while true {
            let reply = try await scripts.run(Self.restoreScript, keys: [keys.deadLetterHold, keys.deadLetters],
                                              arguments: [Array("1000".utf8)])
            guard let parts = reply.array, parts.count == 2, let moved = parts[0].integer, let left = parts[1].integer else {
                throw RedisError.unexpectedReply("restore held dead letters: \(reply.shape)")
            }
            restored += Int(moved)
            if left == 0 { return restored }
        }
    }

    /// KEYS: dlq, queue, hold. ARGV: per tail entry, oldest first: the entry, then 'R' and the message to
    /// enqueue, 'D' to delete it or 'K' to keep it. Returns the entries replayed or deleted, or -1 if the tail
    /// differs.
    static let pageScript = Script(name: "dlq-page", source: """
    local n = #ARGV / 2
    local tail = redis.call('LRANGE', KEYS[1], -n, -1)
    if #tail ~= n then return -1 end
    for i = 1, n do
      if tail[n - i + 1] ~= ARGV[2 * i - 1] then return -1 end
    end
    redis.call('RPOP', KEYS[1], n)
    local done = 0
    for i = 1, n do
      local action = ARGV[2 * i]
      local kind = string.sub(action, 1, 1)
      if kind == 'R' then
        redis.call('LPUSH', KEYS[2], string.sub(action, 2))
        done = done + 1
      elseif kind == 'D' then
        done = done + 1
      else
        redis.call('LPUSH', KEYS[3], ARGV[2 * i - 1])
      end
    end
    return done
    """)

    /// KEYS: hold, dlq. ARGV: most entries per call. The hold's newest kept entries are at its head; each call
    /// appends the next ones at the dlq's oldest end, so the oldest kept entry ends there last.
    /// Returns {moved, left in the hold}.
    static let restoreScript = Script(name: "restore-held", source: """
    local items = redis.call('LRANGE', KEYS[1], 0, tonumber(ARGV[1]) - 1)
    if #items == 0 then return {0, 0} end
    redis.call('RPUSH', KEYS[2], unpack(items))
    local left = redis.call('LLEN', KEYS[1]) - #items
    if left == 0 then redis.call('DEL', KEYS[1]) else redis.call('LTRIM', KEYS[1], #items, -1) end
    return {#items, left}
    """)
}
