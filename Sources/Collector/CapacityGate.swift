import PushCore

/// Bounds what the pipeline holds, in notifications (tokens) and in bytes of claimed elements: the
/// collector claims only while both are under their limits, so memory stays bounded whatever the backlog.
/// It also counts what the bulk lane holds, which `collector.bulk_share` bounds while chat work waits, and
/// what each shard holds: a poison suspect is claimed alone in its shard, so it waits for its own shard's work
/// only, never for the other shards' (which, under steady load, are never all done at once).
///
/// Isolation: work held by an app that cannot send (`AppWaitBoard`) takes no room from claims, so another
/// app's messages are still claimed; it may hold at most another `limit` in all (`hardLimit`), and what a
/// waiting app's messages claimed after that would add is parked in Redis by the collector, not held here.
public actor CapacityGate {
    public let limit: Int
    public let byteLimit: Int
    public private(set) var inFlight = 0
    public private(set) var bytesInFlight = 0
    /// The part of `inFlight` and `bytesInFlight` claimed from the bulk list.
    public private(set) var bulkInFlight = 0
    public private(set) var bulkBytesInFlight = 0
    private var waiters: [CheckedContinuation<Void, Never>] = []
    private var emptyWaiters: [CheckedContinuation<Void, Never>] = []
    /// Per shard (by index): notifications and bytes its collector added that its acknowledger has not released.
    private var shardLoads = [(notifications: Int, bytes: Int)](repeating: (0, 0), count: PipelineSeq.maxShards)
    private var shardEmptyWaiters: [Int: [CheckedContinuation<Void, Never>]] = [:]
    private var opened = false
    /// Apps that wait, and the work their lanes hold (nil: nothing is discounted).
    private let board: AppWaitBoard?
    /// What the pipeline holds at most, waiting work included: memory stays bounded whatever waits.
    public var hardLimit: Int { limit.multipliedReportingOverflow(by: 2).overflow ? Int.max : limit * 2 }

    public init(limit: Int, byteLimit: Int = 64 << 20, board: AppWaitBoard? = nil) {
        self.limit = limit
        self.byteLimit = byteLimit
        self.board = board
    }

    /// Work that waits on an app that cannot send, as far as this gate holds it.
    private var waiting: Int { min(max(0, board?.waitingNotifications ?? 0), inFlight) }

    /// Notifications that may still be claimed: waiting work takes no room, up to the hard limit.
    public var room: Int { max(0, min(limit - (inFlight - waiting), hardLimit - inFlight)) }
    public var byteRoom: Int { max(0, byteLimit - bytesInFlight) }
    public var isEmpty: Bool { inFlight == 0 && bytesInFlight == 0 }

    /// Whether nothing of shard `shard` is in flight.
    public func isEmpty(shard: Int) -> Bool {
        let load = shardLoads[Self.index(shard)]
        return load.notifications == 0 && load.bytes == 0
    }

    /// Room in notifications and bytes, whether nothing is in flight, and whether nothing of `shard` is, read
    /// in one call.
    public func state(shard: Int = 0) -> (room: Int, byteRoom: Int, isEmpty: Bool, shardIsEmpty: Bool) {
        (room, byteRoom, isEmpty, isEmpty(shard: shard))
    }

    /// What each lane holds, read in one call.
    public var lanes: (chat: Int, bulk: Int, bulkBytes: Int) { (inFlight - bulkInFlight, bulkInFlight, bulkBytesInFlight) }

    /// Returns once there is room for `notifications` more (or the gate was opened for shutdown). Waiting
    /// for a good batch's worth, rather than any room at all, keeps claims large when the pipeline is full:
    /// each claim costs Redis mostly per call, so a claim of 16 costs nearly what a claim of 1,000 does.
    public func waitForRoom(atLeast notifications: Int = 1) async {
        while !hasRoom(notifications) && !opened {
            await withCheckedContinuation { waiters.append($0) }
        }
    }

    private func hasRoom(_ notifications: Int) -> Bool {
        room >= min(notifications, limit) && bytesInFlight < byteLimit
    }

    /// The work that waits changed (`AppWaitBoard.changes`): claims waiting for room may go now.
    public func waitingChanged() {
        if hasRoom(1) { wake(&waiters) }
    }

    /// Returns once nothing is in flight (or the gate was opened).
    public func waitUntilEmpty() async {
        if isEmpty || opened { return }
        await withCheckedContinuation { emptyWaiters.append($0) }
    }

    /// Returns once nothing of shard `shard` is in flight (or the gate was opened): a message of that shard
    /// whose holders died before is claimed alone only then.
    public func waitUntilEmpty(shard: Int) async {
        if isEmpty(shard: shard) || opened { return }
        await withCheckedContinuation { shardEmptyWaiters[Self.index(shard), default: []].append($0) }
    }

    /// `shard`: the index of the shard the work was claimed from; its release names the same one.
    public func add(_ notifications: Int, bytes: Int = 0, lane: Lane = .chat, shard: Int = 0) {
        inFlight += notifications
        bytesInFlight += bytes
        let index = Self.index(shard)
        shardLoads[index].notifications += notifications
        shardLoads[index].bytes += bytes
        if lane == .bulk {
            bulkInFlight += notifications
            bulkBytesInFlight += bytes
        }
    }

    public func release(_ notifications: Int, bytes: Int = 0, lane: Lane = .chat, shard: Int = 0) {
        inFlight -= notifications
        bytesInFlight -= bytes
        let index = Self.index(shard)
        shardLoads[index].notifications -= notifications
        shardLoads[index].bytes -= bytes
        if lane == .bulk {
            bulkInFlight -= notifications
            bulkBytesInFlight -= bytes
        }
        if hasRoom(1) { wake(&waiters) }
        if isEmpty { wake(&emptyWaiters) }
        if isEmpty(shard: index), var waiting = shardEmptyWaiters.removeValue(forKey: index) { wake(&waiting) }
    }

    /// Lets every waiter go: used at shutdown, when nobody will release capacity any more.
    public func open() {
        opened = true
        wake(&waiters)
        wake(&emptyWaiters)
        for index in Array(shardEmptyWaiters.keys) {
            if var waiting = shardEmptyWaiters.removeValue(forKey: index) { wake(&waiting) }
        }
    }

    private static func index(_ shard: Int) -> Int { max(0, min(shard, PipelineSeq.maxShards - 1)) }

    private func wake(_ list: inout [CheckedContinuation<Void, Never>]) {
        let ready = list
        list.removeAll()
        ready.forEach { $0.resume() }
    }
}
