import Dispatch
import PushCore
import Synchronization

/// Where a transport lane's policy reads the time: retry backoff, request deadlines, service holds, the
/// credential pause, expiry and the queue-to-service latency. The system clock in production; a test gives a
/// `ManualTransportClock` and moves time itself, so that backoff, deadlines, holds and the pause are tested
/// without waiting.
///
/// The scheduler hands its uptime reading to the driver with each request (`DriverRequest.now`), and the drivers
/// report wire times from it, so drivers follow the injected clock. The ownership lease does not: its validity
/// is written on the system's uptime by the heartbeat, so a lane with a manual clock should run unfenced.
public protocol TransportClock: Sendable {
    /// Monotonic nanoseconds from an arbitrary origin (the system's uptime).
    func uptimeNanoseconds() -> UInt64
    /// Milliseconds since the Unix epoch.
    func wallMillis() -> Int64
    /// Whole seconds since the Unix epoch (truncated, as a notification's expiration is compared).
    func wallSeconds() -> Int64
}

/// The machine's clocks: `DispatchTime`'s uptime and `WallClock`.
public struct SystemTransportClock: TransportClock {
    public init() {}

    @inline(__always)
    public func uptimeNanoseconds() -> UInt64 { DispatchTime.now().uptimeNanoseconds }
    public func wallMillis() -> Int64 { WallClock.nowMillis() }
    public func wallSeconds() -> Int64 { WallClock.nowSeconds() }
}

/// A clock that moves only when told (`advance(by:)`), both readings together. Readable from any thread
/// without a lock (the scheduler's thread reads it while a test moves it).
public final class ManualTransportClock: TransportClock {
    private let uptime: Atomic<UInt64>
    private let wall: Atomic<Int64>

    /// Starts far from zero: the scheduler treats 0 as "never" (its first deadline scan is due at once).
    public init(uptimeNanoseconds: UInt64 = 1_000_000_000_000, wallMillis: Int64 = 1_767_225_600_000) {
        uptime = Atomic(uptimeNanoseconds)
        wall = Atomic(wallMillis)
    }

    public func uptimeNanoseconds() -> UInt64 { uptime.load(ordering: .acquiring) }
    public func wallMillis() -> Int64 { wall.load(ordering: .acquiring) }
    public func wallSeconds() -> Int64 { wallMillis() / 1000 }

    /// Moves both clocks forward by `duration` (whole nanoseconds; a negative duration is ignored).
    public func advance(by duration: Duration) {
        let (seconds, attoseconds) = duration.components
        guard seconds > 0 || (seconds == 0 && attoseconds > 0) else { return }
        let nanos = UInt64(seconds) &* 1_000_000_000 &+ UInt64(attoseconds / 1_000_000_000)
        // Wall first, uptime last: a reader that sees the new uptime sees the new wall time too.
        wall.add(Int64(nanos / 1_000_000), ordering: .releasing)
        uptime.add(nanos, ordering: .releasing)
    }
}
