import Logging
import PushCore

/// What the lane reports: its driver's figures as of the last deadline scan, and answer and retry counts
/// flushed to the metrics once per turn.
extension Scheduler {
    /// Open HTTP/2 connections to the service.
    public var openConnections: Int { driverStats.withLock { $0.connections } }

    /// The servers' SETTINGS_MAX_CONCURRENT_STREAMS summed over this lane's connections (nil: unknown).
    public var streamsLimit: Int? { driverStats.withLock { $0.streams } }

    /// Requests in flight, the most there were at once, and how many may be (the limiter's limit), as of the last
    /// deadline scan (every 50 ms).
    public var requestsInFlight: (now: Int, peak: Int, limit: Int) {
        driverStats.withLock { ($0.active, $0.peakActive, $0.limit) }
    }

    /// How often the limiter cut the limit for overload signals (429/503 answers, refused streams, GOAWAYs naming
    /// an error, timeouts), as of the last deadline scan.
    public var overloadBackoffs: Int { driverStats.withLock { $0.overloadBackoffs } }

    func flushMetrics() {
        metrics.responses(status: 200, reason: "", count: answered200)
        answered200 = 0
        for (key, count) in answerCounts { metrics.responses(status: key.status, reason: key.reason, count: count) }
        for (reason, count) in retryCounts { metrics.retries(reason: reason, count: count) }
        answerCounts.removeAll(keepingCapacity: true)
        retryCounts.removeAll(keepingCapacity: true)
    }
}
