/// How many messages each parked list holds, as this worker last saw it: the Unparker measures every list of the apps
/// this worker sends for once a second (`record`), and the collector counts what it parks in between (`noteParked`).
/// The collector reads it to keep a list under `retention.parked_max`: past it, a message that would be parked is a
/// dead letter instead (`ParkedListFull`, replayable). The count is a worker's view, refreshed each second, so a list
/// may pass the cap by what the fleet parks in that second.
public final class ParkedLengths: Sendable {
    /// The process's, shared by its shards' collectors and unparkers.
    public static let shared = ParkedLengths()

    private let lengths = Locked([String: Int]())

    public init() {}

    /// The list `key` holds `length` messages now (measured).
    public func record(_ key: String, length: Int) {
        lengths.withLock { $0[key] = max(0, length) }
    }

    /// One more message parked on `key` since it was measured.
    public func noteParked(_ key: String) {
        lengths.withLock { $0[key, default: 0] &+= 1 }
    }

    /// What `key` holds as far as this worker knows (0 for a list it never saw).
    public func length(_ key: String) -> Int {
        lengths.withLock { $0[key] ?? 0 }
    }
}
