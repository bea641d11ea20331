/// Exponential backoff with jitter for reconnecting to Redis.
public struct Backoff: Sendable {
    private var current: Int
    private let maxMillis: Int

    public init(initialMillis: Int, maxMillis: Int) {
        current = initialMillis
        self.maxMillis = maxMillis
    }

    /// The next delay in milliseconds: doubles each call up to the maximum, jittered by up to a quarter.
    public mutating func next() -> Int {
        let delay = current
        current = min(maxMillis, current * 2)
        return delay - Int.random(in: 0...(delay / 4))
    }

    public mutating func reset(to millis: Int) { current = millis }
}
