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
        } else if rateWaitUntil != nil && !ready.isEmpty {
            // The app sends as fast as its service allows (a vendor's rate limit): what it cannot send yet takes
            // no room from other apps.
            reason = "rate: the app's rate limit is spent"
        } else if let unreachable, active + ready.count + delayed.count > 0 {
            reason = "unreachable: \(unreachable)"
        } else if !ready.isEmpty && recentLatencyMicros >= Int64(settings.requestTimeoutMillis) * 100 {
            // Requests wait for a stream of an endpoint that answers slowly; the reason stays the same text
            // while it lasts (a change wakes the gate).
            reason = "slow: answers take over \(settings.requestTimeoutMillis / 10) ms"
        } else {
            reason = nil
        }
        // A class held (a quota spent for it) holds only that class: its waiting requests are in `delayed` (with the
        // few retries that wait their backoff), while what is ready sends and keeps its room.
        board.report(lane: settings.boardLane, waiting: reason != nil,
                     queued: reason != nil ? ready.count + delayed.count : delayed.count, reason: reason ?? "",
                     heldClasses: credential.heldClasses(now: now))
    }
}
