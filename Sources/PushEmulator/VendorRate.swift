import NIOConcurrencyHelpers

/// Per-app counts within one second of the side's clock: a vendor may limit requests per second, or count
/// devices (tokens) per second. A fixed window per clock second: with a frozen clock the window never rolls
/// over, so a test's "the third request this second is refused" holds however slow the machine is.
final class VendorRate: Sendable {
    private struct Window {
        var second: Int64
        var requests = 0
        var tokens = 0
    }

    private let windows = NIOLockedValueBox<[String: Window]>([:])

    /// Counts one request of `tokens` tokens for `app` at `now`, unless it would go over a limit (nil: no
    /// limit); false when refused (a refused request is not counted).
    func admit(app: String, tokens: Int, now: Double, requestsPerSecond: Int?, tokensPerSecond: Int?) -> Bool {
        guard requestsPerSecond != nil || tokensPerSecond != nil else { return true }
        let second = Int64(now.rounded(.down))
        return windows.withLockedValue { windows in
            var window = windows[app].flatMap { $0.second == second ? $0 : nil } ?? Window(second: second)
            if let limit = requestsPerSecond, window.requests + 1 > limit { return false }
            if let limit = tokensPerSecond, window.tokens + tokens > limit { return false }
            window.requests += 1
            window.tokens += tokens
            windows[app] = window
            return true
        }
    }
}
