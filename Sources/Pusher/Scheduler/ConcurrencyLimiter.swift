/// How many requests the transport keeps in flight, within what the servers allow (`maximum`: with our own
/// sessions the sum of the open connections' SETTINGS_MAX_CONCURRENT_STREAMS; libcurl cannot see those, so a
/// fixed bound there).
///
/// It backs off on what signals overload: answers that say so (429, 503), streams the server refused or never
/// processed (REFUSED_STREAM, above a GOAWAY naming an error: a graceful one is a rotation), timeouts; in
/// proportion to their share of the answers, at most once per round trip, so that a stray 429 for one device
/// costs next to nothing while a server refusing much of what it gets is relieved at once. It also backs off when latency shows queueing: the recent average above
/// twice the best latency seen (plus 10 ms of jitter) and above a tenth of the request timeout. A round trip
/// that is simply the distance (50 or 150 ms, steady) is neither: it is the best latency, and throughput is
/// then requests in flight over the round trip, so every stream the servers allow is used.
///
/// While neither signal comes and work waits, the limit grows (doubling at first, like TCP's slow start, and
/// again after a cut for overload up to half of what it was; otherwise by its square root per update; with
/// nghttp2 it starts at the maximum, `startAtMaximum`). Once it reaches the maximum it follows it: the servers
/// bind, not the limiter, and a connection opened or a SETTINGS raised is used at once. Requests beyond the limit wait in the
/// transport's own queue, where no deadline runs. Confined to the transport thread.
struct ConcurrencyLimiter {
    /// The transport sets the first limit (`TransportSettings.initialActiveRequests`).
    var limit = 1
    /// Never below this: one slow answer must not stall a connection.
    var minimum = 2
    /// A tenth of the request timeout, in microseconds: latency below it is never cut back.
    var latencyFloorMicros: Int64 = 1_000_000
    private var slowStart = true
    /// The limit reached the maximum with no overload since: it follows the maximum up and down.
    private var followsServers = false
    private var bestMicros: Int64 = .max
    private var windowBestMicros: Int64 = .max
    private var windowStarted: UInt64 = 0
    private var sumMicros: Int64 = 0
    private var samples = 0
    /// Answers, overload signals, and the signals that were no answer (refused streams, timeouts), since the
    /// last back-off.
    private var answers = 0
    private var overloads = 0
    private var unanswered = 0
    /// When the limit last backed off for overload signals (uptime nanoseconds).
    private var lastBackoff: UInt64 = 0
    /// After a cut for overload, the limit doubles again up to this (half of what it was before the cut), as
    /// TCP's slow start does up to its threshold: a server that refused everything for a while and then recovers
    /// is used again within a few round trips, not one stream at a time. 0: no recovery under way. (Queueing,
    /// a gradual signal, is recovered from gradually.)
    private var recoverTo = 0
    /// The recent average latency (microseconds), the spacing of back-offs: one per round trip, as the signals
    /// of one round trip are one congestion event.
    private var roundTripMicros: Int64 = 0

    /// Whether the last answers took longer than twice the best latency plus a millisecond: requests queue
    /// somewhere (at the servers, or in this process when its CPU is the bound), so more streams would add
    /// latency, not throughput. Below the latency floor this cuts nothing; it only keeps more connections from
    /// being opened for more streams. (With the answers at once, 0.2 ms, and the CPU the bound, requests
    /// waited 5 to 10 ms in this process: more connections then only cost CPU, 11% more per notification.)
    private(set) var queueing = false
    /// How often it backed off for overload signals (`Scheduler.overloadBackoffs`, for tests).
    private(set) var overloadBackoffs = 0
    /// Still in its first slow start, below what the servers allow: work that waits now waits for this lane to open
    /// up (a doubling per round trip), not for the servers.
    var rampingUp: Bool { slowStart && !followsServers }
    static let queueingToleranceMicros: Int64 = 1_000

    /// The best latency is forgotten after this long (the path may have changed).
    static let bestWindowNanos: UInt64 = 30_000_000_000
    /// Latency up to twice the best plus this much is not queueing (servers jitter).
    static let toleranceMicros: Int64 = 10_000
    /// At most this share of the limit is given up per back-off.
    static let largestBackoff = 0.5

    /// Starts at the servers' limit, without a slow start: for a client that sees their SETTINGS and never opens
    /// more streams than they allow (nghttp2; a token-auth connection's first stream is its own limit there).
    mutating func startAtMaximum() {
        slowStart = false
        followsServers = true
    }

    /// An answer came (any status), after `latencyMicros` on the wire.
    mutating func observe(latencyMicros: Int64) {
        guard latencyMicros >= 0 else { return }
        bestMicros = min(bestMicros, latencyMicros)
        windowBestMicros = min(windowBestMicros, latencyMicros)
        sumMicros &+= latencyMicros
        samples += 1
        answers += 1
    }

    /// The server said it is overloaded (429, 503: `answered`, also `observe`d), or refused or never processed a
    /// stream, or a request timed out.
    mutating func observeOverload(answered: Bool) {
        overloads += 1
        if !answered { unanswered += 1 }
    }

    /// The new limit, from the answers since the last update. `demand`: work is waiting for the limit.
    mutating func update(now: UInt64, demand: Bool, maximum: Int) -> Int {
        let maximum = max(minimum, maximum)
        if now &- windowStarted > Self.bestWindowNanos {
            // Start a new window; keep the previous window's best until this one has its own.
            bestMicros = windowBestMicros == .max ? bestMicros : windowBestMicros
            windowBestMicros = .max
            windowStarted = now
        }
        // Nothing heard since the last update: nothing to go by (the first limit stays, even below the minimum,
        // until the servers have answered: libcurl would open a second connection for a second request).
        guard samples > 0 || overloads > 0 || followsServers else { return min(limit, maximum) }
        let average: Int64? = samples > 0 ? sumMicros / Int64(samples) : nil
        if let average {
            roundTripMicros = average
            queueing = bestMicros != .max && average > bestMicros.multipliedReportingOverflow(by: 2).partialValue &+ Self.queueingToleranceMicros
        }
        sumMicros = 0
        samples = 0
        let (signals, events) = (overloads, max(1, answers + unanswered))
        if signals > 0 && now &- lastBackoff >= UInt64(max(0, roundTripMicros)) &* 1000 {
            // Overload: give up the share of the limit that was refused (at most half), once per round trip.
            forgetSignals()
            lastBackoff = now
            overloadBackoffs += 1
            slowStart = false
            followsServers = false
            let share = min(Self.largestBackoff, Double(signals) / Double(events))
            recoverTo = max(recoverTo, min(limit, maximum) / 2)
            limit = Int(Double(min(limit, maximum)) * (1 - share))
        } else if let average, bestMicros != .max,
                  average > max(latencyFloorMicros, bestMicros.multipliedReportingOverflow(by: 2).partialValue &+ Self.toleranceMicros) {
            // Queueing: shrink in proportion, at most by half per update.
            forgetSignals()
            slowStart = false
            followsServers = false
            let target = max(latencyFloorMicros, bestMicros.multipliedReportingOverflow(by: 2).partialValue &+ Self.toleranceMicros)
            let gradient = max(0.5, Double(target) / Double(average))
            limit = Int(Double(min(limit, maximum)) * gradient)
        } else if signals == 0 {
            forgetSignals()
            if followsServers {
                limit = maximum
            } else if demand && average != nil && limit < maximum {
                if slowStart || limit < recoverTo {
                    limit *= 2
                } else {
                    limit += max(1, Int(Double(limit).squareRoot()))
                }
                if limit >= recoverTo { recoverTo = 0 }
                if limit >= maximum {
                    limit = maximum
                    followsServers = true
                }
            }
        }
        // Kept above a maximum that fell (a connection closing, a SETTINGS lowered) unless it follows it: a
        // connection replaced after a GOAWAY is no reason to start over.
        limit = max(minimum, limit)
        return min(limit, maximum)
    }

    private mutating func forgetSignals() {
        answers = 0
        overloads = 0
        unanswered = 0
    }
}
