import PushCore

/// Bounds what the pipeline holds, in notifications (tokens) and in bytes of claimed elements: the
/// collector claims only while both are under their limits, so memory stays bounded whatever the backlog.
/// It also counts what the bulk lane holds, which `collector.bulk_share` bounds while chat work waits.
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
    private var opened = false

    public init(limit: Int, byteLimit: Int = 64 << 20) {
        self.limit = limit
        self.byteLimit = byteLimit
    }

    /// Notifications that may still be claimed.
    public var room: Int { max(0, limit - inFlight) }
    public var byteRoom: Int { max(0, byteLimit - bytesInFlight) }
    public var isEmpty: Bool { inFlight == 0 && bytesInFlight == 0 }

    /// Room in notifications and bytes, and whether nothing is in flight, read in one call.
    public var state: (room: Int, byteRoom: Int, isEmpty: Bool) { (room, byteRoom, isEmpty) }

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
        limit - inFlight >= min(notifications, limit) && bytesInFlight < byteLimit
    }

    /// Returns once nothing is in flight (or the gate was opened): a message whose holders died before is claimed alone only then.
    public func waitUntilEmpty() async {
        if isEmpty || opened { return }
        await withCheckedContinuation { emptyWaiters.append($0) }
    }

    public func add(_ notifications: Int, bytes: Int = 0, lane: Lane = .chat) {
        inFlight += notifications
        bytesInFlight += bytes
        if lane == .bulk {
            bulkInFlight += notifications
            bulkBytesInFlight += bytes
        }
    }

    public func release(_ notifications: Int, bytes: Int = 0, lane: Lane = .chat) {
        inFlight -= notifications
        bytesInFlight -= bytes
        if lane == .bulk {
            bulkInFlight -= notifications
            bulkBytesInFlight -= bytes
        }
        if inFlight < limit && bytesInFlight < byteLimit { wake(&waiters) }
        if isEmpty { wake(&emptyWaiters) }
    }

    /// Lets every waiter go: used at shutdown, when nobody will release capacity any more.
    public func open() {
        opened = true
        wake(&waiters)
        wake(&emptyWaiters)
    }

    private func wake(_ list: inout [CheckedContinuation<Void, Never>]) {
        let ready = list
        list.removeAll()
        ready.forEach { $0.resume() }
    }
}
