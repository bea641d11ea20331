/// How many requests the transport keeps in flight, adapted to the servers' answers (a gradient limiter, as
/// concurrency-limits libraries have it). A server can be slower than the streams it allows: with libcurl,
/// requests beyond the servers' stream limits wait inside nghttp2, already counted as sent, so their deadline
/// runs; with our own sessions every allowed stream is really on the wire, and a server that cannot keep up
/// with all of them answers late. Either way latency grows with the queue.
/// While the recent average latency stays under the target, the limit grows (doubling at first, like
/// TCP's slow start); above it, the limit shrinks in proportion. The target is the larger of twice the
/// best latency seen (plus 10 ms of jitter) and a tenth of the request timeout: throughput is what
/// matters for push, so latency may grow with load, but never toward the deadline. Requests beyond the
/// limit wait in the transport's own queue, where no deadline runs. Confined to the transport thread.
struct ConcurrencyLimiter {
    /// The transport sets the first limit (`TransportSettings.initialActiveRequests`).
    var limit = 1
    /// Never below this: one slow answer must not stall a connection.
    var minimum = 2
    /// A tenth of the request timeout, in microseconds: latency below it is never cut back.
    var latencyFloorMicros: Int64 = 1_000_000
    private var slowStart = true
    private var bestMicros: Int64 = .max
    private var windowBestMicros: Int64 = .max
    private var windowStarted: UInt64 = 0
    private var sumMicros: Int64 = 0
    private var samples = 0

    /// The best latency is forgotten after this long (the path may have changed).
    static let bestWindowNanos: UInt64 = 30_000_000_000
    /// Latency up to twice the best plus this much is not queueing (servers jitter).
    static let toleranceMicros: Int64 = 10_000

    mutating func observe(latencyMicros: Int64) {
        guard latencyMicros >= 0 else { return }
        bestMicros = min(bestMicros, latencyMicros)
        windowBestMicros = min(windowBestMicros, latencyMicros)
        sumMicros &+= latencyMicros
        samples += 1
    }

    /// The new limit, from the answers since the last update. `demand`: work is waiting for the limit.
    mutating func update(now: UInt64, demand: Bool, maximum: Int) -> Int {
        if now &- windowStarted > Self.bestWindowNanos {
            // Start a new window; keep the previous window's best until this one has its own.
            bestMicros = windowBestMicros == .max ? bestMicros : windowBestMicros
            windowBestMicros = .max
            windowStarted = now
        }
        guard samples > 0, bestMicros != .max else { return min(limit, maximum) }
        let average = sumMicros / Int64(samples)
        sumMicros = 0
        samples = 0
        let target = max(latencyFloorMicros, bestMicros.multipliedReportingOverflow(by: 2).partialValue &+ Self.toleranceMicros)
        if average > target {
            // Queueing: shrink in proportion, at most by half per update.
            slowStart = false
            let gradient = max(0.5, Double(target) / Double(average))
            limit = Int(Double(limit) * gradient)
        } else if demand {
            limit = slowStart ? limit * 2 : limit + max(1, Int(Double(limit).squareRoot()))
        }
        limit = max(minimum, min(limit, maximum))
        return limit
    }
}
