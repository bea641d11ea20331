import Logging
import PushCore

/// Isolation: what the lane tells the wait board about why its work waits.
extension Scheduler {
    /// Tells the wait board (isolation) whether this lane can send and, while it cannot, how many requests it
    /// holds: that work then takes no room from claims, and the app's newly claimed messages are parked.
    func reportWaiting(now: UInt64) {
        guard let board = settings.waitBoard else { return }
        let reason: String?
        if pause.paused {
            reason = "paused: the service refuses the credential"
        } else if let waitingForCredential {
            reason = "no credential: \(waitingForCredential)"
        } else if credential.holdUntil(now: now) != nil {
            reason = "held: the service asked to slow down"
        } else if let unreachable, active + ready.count + delayed.count > 0 {
            reason = "unreachable: \(unreachable)"
        } else {
            reason = busyReason(now: now)
        }
        // A class held (a quota spent for it) holds only that class: its waiting requests are in `delayed` (with the
        // few retries that wait their backoff), while what is ready sends and keeps its room.
        if reason?.hasPrefix("busy") != true { busyReported = false }
        board.report(lane: settings.boardLane, waiting: reason != nil,
                     queued: reason != nil ? ready.count + delayed.count : delayed.count, reason: reason ?? "",
                     heldClasses: credential.heldClasses(now: now))
    }

    /// A service that answers is busy, not stalled: the lane keeps sending at the rate it answers (or its rate limit
    /// allows), and only while its answers are slow (over a tenth of the request timeout) or it waits for its rate,
    /// and what waits to start would take it longer than `busyWindowMillis` at that rate, does the app's further work
    /// wait in Redis instead of in the pipeline (once said, until it is down to half of that). A
    /// service that answers nothing for `stalledAfterMillis` (half the request timeout) while requests are on the wire
    /// is stalled. The reasons
    /// are fixed texts while they last (a change wakes the gate).
    func busyReason(now: UInt64) -> String? {
        let window = max(1, settings.busyWindowMillis)
        let stall = max(1, settings.stalledAfterMillis ?? max(1000, settings.requestTimeoutMillis / 2))
        // A measure spans at least a second and ends with tokens settled (answers come in bursts: a second without
        // one says nothing), or after the stall time without any: the rate is then 0.
        let elapsed = now &- settledSince
        if settledSince == 0 || (elapsed >= 1_000_000_000 && settledSinceMeasure > 0) || elapsed >= UInt64(stall) * 1_000_000 {
            if settledSince != 0, elapsed > 0 {
                let (scaled, overflow) = UInt64(max(0, settledSinceMeasure)).multipliedReportingOverflow(by: 1_000_000_000)
                settledPerSecond = overflow ? Int.max : Int(min(scaled / elapsed, UInt64(Int.max)))
            }
            settledSince = now
            settledSinceMeasure = 0
        }
        guard !ready.isEmpty else { return nil }
        if settledPerSecond == 0 && active > 0 && oldestOnWireNanos > UInt64(stall) * 1_000_000 {
            return "stalled: its service answered nothing for over \(stall) ms"
        }
        // Not measured yet (the first answers are on their way): no verdict. Nor for a lane whose answers come fast
        // and that does not wait for its rate: what waits there waits for this process (its room, its CPU), and
        // parking it would only move it through Redis and back.
        let slowAnswers = recentLatencyMicros >= Int64(settings.requestTimeoutMillis) * 100
        guard settledPerSecond > 0, slowAnswers || rateWaitUntil != nil else {
            busyReported = false
            return nil
        }
        let (scaled, overflow) = ready.count.multipliedReportingOverflow(by: 1000)
        let drainMillis = overflow ? Int.max : scaled / settledPerSecond
        // While the lane still opens up to what the servers allow (its limiter's first slow start, a doubling per
        // round trip), what waits waits for the lane more than for the service: only three windows' worth is busy.
        let bound = limiter.rampingUp ? window.multipliedReportingOverflow(by: 3).partialValue : (busyReported ? window / 2 : window)
        busyReported = drainMillis > bound
        return busyReported ? "busy: what waits would take its service over \(window) ms" : nil
    }
}
