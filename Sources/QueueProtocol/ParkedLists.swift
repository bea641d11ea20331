import PushCore
import RedisClient

/// What an operator does with a parked list (`worker parked`, docs/tools.md): put its messages back on their input
/// list, or drop them, keeping an audit copy. A parked list belongs to an app that could not send when its messages
/// were claimed; the workers put it back themselves once the app can send (`Unparker`). These are for what no worker
/// will put back: an app removed from the configuration, or messages nobody wants sent any more.
public struct ParkedLists: Sendable {
    let connection: any RedisCommands
    let keys: RedisKeys
    let scripts: ScriptRunner

    /// How long a dropped list's audit copy is kept by default: a week.
    public static let auditMillis: Int64 = 7 * 24 * 3600 * 1000

    public init(connection: any RedisCommands, keys: RedisKeys) {
        self.connection = connection
        self.keys = keys
        scripts = ScriptRunner(connection: connection)
    }

    /// Moves every message of `list` (a parked list, or a dropped one's audit copy) to the consumer end of the input
    /// list of `messageClass`, oldest first, a thousand at a time (each step atomic: a message is always in exactly
    /// one of the two lists). Returns how many moved.
    public func requeue(list: String, messageClass: MessageClass) async throws -> Int {
        var moved = 0
        while true {
            let reply = try await scripts.run(QueueScripts.unpark, keys: [list, keys.queue(messageClass.lane)],
                                              arguments: [Array("1000".utf8)])
            let step = Int(reply.integer ?? 0)
            moved += step
            if step == 0 { return moved }
        }
    }

    /// Renames a parked list to its audit copy (`RedisKeys.droppedParked`), which expires after `keepMillis`; one
    /// atomic step. Returns the copy's key and how many messages it holds (0 and nil when the list is empty).
    public func drop(list: String, atMillis now: Int64, keepMillis: Int64 = ParkedLists.auditMillis) async throws -> (copy: String?, messages: Int) {
        let copy = keys.droppedParked(list: list, atMillis: now)
        let reply = try await scripts.run(Self.dropScript, keys: [list, copy], arguments: [Array(String(max(1, keepMillis)).utf8)])
        let messages = Int(reply.integer ?? 0)
        return (messages > 0 ? copy : nil, messages)
    }

    /// KEYS: the parked list, its audit copy; ARGV: the copy's lifetime in ms. Returns how many messages moved.
    static let dropScript = Script(name: "drop-parked", source: """
    local n = redis.call('LLEN', KEYS[1])
    if n == 0 then return 0 end
    redis.call('RENAME', KEYS[1], KEYS[2])
    redis.call('PEXPIRE', KEYS[2], ARGV[1])
    return n
    """)
}
