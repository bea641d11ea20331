import Synchronization

/// Final outcomes so far: per token (delivered, feedback, dead-lettered) or per message (filtered, acknowledged).
public struct OutcomeCounts: Sendable, Equatable {
    public var delivered = 0
    public var feedback = 0
    public var deadLettered = 0
    public var filteredMessages = 0
    public var acknowledgedMessages = 0
    /// Messages claimed and not yet complete.
    public var trackedMessages = 0
    public init() {}
}

/// The pipeline's counters, readable from any thread (logs, demo summary, shutdown report).
public final class SharedCounts: Sendable {
    private let state = Mutex(OutcomeCounts())

    public init() {}

    public var snapshot: OutcomeCounts { state.withLock { $0 } }

    public func store(_ counts: OutcomeCounts) { state.withLock { $0 = counts } }
}
