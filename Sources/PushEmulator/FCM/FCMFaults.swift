import Foundation
import NIOConcurrencyHelpers

/// The faults `messages:send` can inject: set at start (`EmulatorConfiguration.fcmFaults`, the CLI's `--fcm-*`
/// flags) and changed while running (`PushEmulator.fcm.setFaults` / `updateFaults`).
public struct FCMFaults: Sendable, Equatable {
    /// Share (0...1) of otherwise good requests answered 429 `QUOTA_EXCEEDED`...
    public var quotaExceededRate = 0.0
    /// ...and 503 `UNAVAILABLE` (drawn after the 429 share).
    public var unavailableRate = 0.0
    /// `Retry-After` (seconds) on every 429 and 503 answer, injected or by token prefix; nil: no header.
    public var retryAfterSeconds: Int?
    /// Send `Retry-After` as an HTTP date (now + `retryAfterSeconds`) instead of seconds: senders must read both.
    public var retryAfterAsHTTPDate = false
    /// Added to every `messages:send` answer: L + random(0...J) ms.
    public var latencyMillis = 0
    public var jitterMillis = 0
    /// GOAWAY after this many `messages:send` requests on a connection (as `goawayAfterStreams` for APNs).
    public var goawayAfterStreams: Int?
    /// Messages one token may receive per minute (FCM's per-device rate, 240 on Android); more are answered 429
    /// `QUOTA_EXCEEDED` with a QuotaFailure naming the device. Nil: not modelled.
    public var deviceRatePerMinute: Int?

    public init() {}
}

/// The live faults, shared by all connections, and the one-shot answers a test queues ("the next 3 requests
/// get 429"), which are deterministic where a share is not.
final class FCMFaultInjector: Sendable {
    private struct State {
        var faults: FCMFaults
        /// Answers for the next requests that pass validation, first in first out.
        var queued: [FCMError] = []
    }

    private let state: NIOLockedValueBox<State>

    init(_ faults: FCMFaults) { state = NIOLockedValueBox(State(faults: faults)) }

    var faults: FCMFaults { state.withLockedValue { $0.faults } }

    func set(_ faults: FCMFaults) { state.withLockedValue { $0.faults = faults } }

    func update(_ change: (inout FCMFaults) -> Void) { state.withLockedValue { change(&$0.faults) } }

    func queue(_ error: FCMError, count: Int) {
        guard count > 0 else { return }
        state.withLockedValue { $0.queued.append(contentsOf: repeatElement(error, count: count)) }
    }

    /// The injected error for one otherwise good request, if any: a queued one first, then the shares.
    func draw(random: () -> Double) -> FCMError? {
        state.withLockedValue { state in
            if !state.queued.isEmpty { return state.queued.removeFirst() }
            let faults = state.faults
            guard faults.quotaExceededRate > 0 || faults.unavailableRate > 0 else { return nil }
            let roll = random()
            if roll < faults.quotaExceededRate { return .quotaExceeded }
            if roll < faults.quotaExceededRate + faults.unavailableRate { return .unavailable }
            return nil
        }
    }

    /// The `Retry-After` header for an answer of `status`, if the faults ask for one.
    func retryAfter(status: Int, now: Date = Date()) -> String? {
        guard status == 429 || status == 503 else { return nil }
        let faults = self.faults
        guard let seconds = faults.retryAfterSeconds else { return nil }
        guard faults.retryAfterAsHTTPDate else { return String(max(0, seconds)) }
        return Self.httpDate(now.addingTimeInterval(Double(max(0, seconds))))
    }

    /// RFC 9110's IMF-fixdate, e.g. `Sun, 06 Nov 1994 08:49:37 GMT`.
    static func httpDate(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }

    /// Answer delay for one request (ms).
    func delayMillis() -> Int {
        let faults = self.faults
        // Clamped to an hour each, so that no setting can make the sum trap.
        let jitter = faults.jitterMillis > 0 ? Int.random(in: 0...min(faults.jitterMillis, 3_600_000)) : 0
        return min(max(0, faults.latencyMillis), 3_600_000) + jitter
    }
}
