import Synchronization

/// When a request of one app last delivered anything, for SPEC 4c's pause rule: every token of a request refused
/// (80300007) while the app has delivered nothing in the last 10 minutes pauses the app instead of reporting the
/// tokens dead, since that is what a wrong app id or project looks like, and believing it would wipe a user base.
/// While the app delivers, a refused request is only its tokens' problem.
///
/// One per app, shared by its lanes (each lane has a service of its own, on a thread of its own): an atomic, no
/// lock. Times are uptime nanoseconds from the caller's clock. Never delivered counts as "not recently": a worker
/// that starts with a wrong app id must pause at once, and a worker whose first request happens to go to dead
/// tokens only is paused (nothing lost, its probes go on) until a request of the app delivers.
public final class HuaweiDeliveryMemory: Sendable {
    /// SPEC 4c's window.
    public static let defaultWindowNanos: UInt64 = 600_000_000_000

    public let windowNanos: UInt64
    /// Uptime of the last delivery, 0 for never.
    private let last = Atomic<UInt64>(0)

    public init(windowNanos: UInt64 = HuaweiDeliveryMemory.defaultWindowNanos) {
        self.windowNanos = windowNanos
    }

    /// A request of the app delivered at least one token at `now`.
    public func delivered(now: UInt64) {
        // The latest wins: lanes answer out of order.
        var current = last.load(ordering: .relaxed)
        while now > current {
            let (exchanged, original) = last.compareExchange(expected: current, desired: now, ordering: .relaxed)
            if exchanged { return }
            current = original
        }
    }

    /// Whether the app delivered anything within the window before `now`.
    public func deliveredRecently(now: UInt64) -> Bool {
        let at = last.load(ordering: .relaxed)
        guard at != 0 else { return false }
        return now < at || now - at < windowNanos
    }
}
