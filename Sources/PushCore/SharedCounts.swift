
/// Final outcomes so far: per token (delivered, feedback, dead-lettered) or per message (filtered, acknowledged).
public struct OutcomeCounts: Sendable, Equatable {
    public var delivered = 0
    public var feedback = 0
    public var deadLettered = 0
    public var filteredMessages = 0
    public var acknowledgedMessages = 0
    /// Messages dropped unsent because recovery gave their claims to another worker (ownership fencing).
    public var claimsLost = 0
    /// Messages claimed and not yet complete.
    public var trackedMessages = 0
    public init() {}
}

/// The pipeline's counters, readable from any thread (logs, demo summary, shutdown report).
public final class SharedCounts: Sendable {
    private let state = Locked(OutcomeCounts())

    public init() {}

    public var snapshot: OutcomeCounts { state.withLock { $0 } }

    public func store(_ counts: OutcomeCounts) { state.withLock { $0 = counts } }
}

extension OutcomeCounts {
    /// Counts of several shards added up.
    public static func + (lhs: OutcomeCounts, rhs: OutcomeCounts) -> OutcomeCounts {
        var sum = lhs
        sum.delivered += rhs.delivered
        sum.feedback += rhs.feedback
        sum.deadLettered += rhs.deadLettered
        sum.filteredMessages += rhs.filteredMessages
        sum.acknowledgedMessages += rhs.acknowledgedMessages
        sum.claimsLost += rhs.claimsLost
        sum.trackedMessages += rhs.trackedMessages
        return sum
    }
}
