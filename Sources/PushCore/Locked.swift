import Foundation

/// A value behind a lock, for state shared between our own threads (transport, Redis, filter) and Swift
/// concurrency. It stands in for `Synchronization.Mutex`: on Linux that is a futex the thread sanitizer cannot
/// see, so under contention every access it guards is reported as a race, and CI's sanitizer run would drown
/// real races in false ones. This lock is a pthread mutex (through `NSLock`), which the sanitizer understands.
public final class Locked<Value: ~Copyable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    public init(_ value: consuming Value) {
        self.value = value
    }

    /// Runs `body` with the value while holding the lock; `body` must not block or take this lock again.
    @inline(__always)
    public func withLock<Result: ~Copyable, Failure: Error>(
        _ body: (inout Value) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
