import NIOConcurrencyHelpers

/// FCM's per-device rate (`FCMFaults.deviceRatePerMinute`): deliveries per token in fixed one-minute windows.
/// A token over its rate is answered 429 with a QuotaFailure naming the device, while every other token of the
/// project goes on, which is what lets a sender tell one busy chat device from the project's quota.
final class FCMDeviceRate: Sendable {
    private struct Window { var start: Double; var count: Int }
    private let windows = NIOLockedValueBox([String: Window]())

    /// Counts one delivery to `token` at `now` (seconds); false when it is over `perMinute`.
    func admit(token: String, now: Double, perMinute: Int) -> Bool {
        windows.withLockedValue { windows in
            var window = windows[token] ?? Window(start: now, count: 0)
            if now - window.start >= 60 { window = Window(start: now, count: 0) }
            guard window.count < perMinute else { return false }
            window.count += 1
            windows[token] = window
            // Bounded memory: tokens not seen for a minute are forgotten when the table grows large.
            if windows.count > 100_000 { windows = windows.filter { now - $0.value.start < 60 } }
            return true
        }
    }
}
