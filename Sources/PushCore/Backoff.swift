/// Exponential backoff with jitter: the one every retry loop uses (Redis reconnects and TRYAGAIN waits, request
/// retries to Apple's or a provider's service, HTTP/2 reconnects, OAuth access-token renewals), each with its own
/// bounds and jitter.
///
/// The n-th delay's ceiling is `base * 2^(n-1)`, at most `max`. Jitter draws the delay uniformly between
/// `lowestPercent` percent of the ceiling and the ceiling, but never below `base`, so part of every delay is
/// certain (a retry budget has a floor) and many clients that failed together do not come back in step.
/// Every attempt number and every pair of bounds gives a delay in `base...max` (just `max` if `max < base`):
/// the arithmetic saturates instead of trapping.
public struct Backoff: Sendable, Equatable {
    public let baseMillis: Int
    public let maxMillis: Int
    /// The lowest share of the ceiling a delay may be, 0...100: 100 is no jitter, 50 is "equal jitter".
    public let lowestPercent: Int
    /// Delays handed out by `next()` since the start or the last `reset()`.
    public private(set) var attempts = 0

    public init(baseMillis: Int, maxMillis: Int, lowestPercent: Int) {
        self.baseMillis = Swift.max(baseMillis, 0)
        self.maxMillis = Swift.max(maxMillis, 0)
        self.lowestPercent = Swift.min(Swift.max(lowestPercent, 0), 100)
    }

    /// The largest delay after the `attempt`-th failure (counted from 1; below 1 counts as 1).
    public func ceilingMillis(attempt: Int) -> Int {
        let doublings = attempt <= 1 ? 0 : Swift.min(attempt - 1, Int.bitWidth - 2)
        guard baseMillis > 0 else { return 0 }
        // base << doublings stays within max exactly when base <= max >> doublings; beyond that it is max
        // (and the shift is never done, so it cannot overflow).
        guard baseMillis <= maxMillis >> doublings else { return maxMillis }
        return baseMillis << doublings
    }

    /// The delay after the `attempt`-th failure, jittered.
    public func delayMillis(attempt: Int) -> Int {
        let ceiling = ceilingMillis(attempt: attempt)
        // floor(ceiling * lowestPercent / 100), in two parts so that no product can overflow.
        let share = ceiling / 100 * lowestPercent + ceiling % 100 * lowestPercent / 100
        let lowest = Swift.max(baseMillis, share)
        guard ceiling > lowest else { return ceiling }
        return Int.random(in: lowest...ceiling)
    }

    /// The next delay of a loop that keeps failing: attempt 1, 2, 3, ... since the start or the last `reset()`.
    public mutating func next() -> Int {
        if attempts < Int.max { attempts += 1 }
        return delayMillis(attempt: attempts)
    }

    /// The loop succeeded: the next failure waits the shortest delay again.
    public mutating func reset() { attempts = 0 }
}

extension Backoff {
    /// Redis reconnects (and the loops that wait for Redis): doubling from `base` to `max`, each delay jittered
    /// down by up to a quarter.
    public static func redisReconnect(baseMillis: Int, maxMillis: Int) -> Backoff {
        Backoff(baseMillis: baseMillis, maxMillis: maxMillis, lowestPercent: 75)
    }
}
