/// Bounds what the pipeline holds: the collector claims only while fewer than `limit` notifications are
/// in flight, so memory stays bounded whatever the backlog in Redis.
public actor CapacityGate {
    public let limit: Int
    public private(set) var inFlight = 0
    private var waiters: [CheckedContinuation<Void, Never>] = []
    private var opened = false

    public init(limit: Int) { self.limit = limit }

    public var room: Int { max(0, limit - inFlight) }

    /// Returns once there is room (or the gate was opened for shutdown).
    public func waitForRoom() async {
        if inFlight < limit || opened { return }
        await withCheckedContinuation { waiters.append($0) }
    }

    public func add(_ notifications: Int) { inFlight += notifications }

    public func release(_ notifications: Int) {
        inFlight -= notifications
        if inFlight < limit { wakeAll() }
    }

    /// Lets every waiter go: used at shutdown, when nobody will release capacity any more.
    public func open() {
        opened = true
        wakeAll()
    }

    private func wakeAll() {
        let ready = waiters
        waiters.removeAll()
        ready.forEach { $0.resume() }
    }
}
