import Foundation

/// A stand-in for a slow DNS server: every lookup after the first `pass`es only once `release()` is called.
final class LookupGate: @unchecked Sendable {
    private let condition = NSCondition()
    private var lookups = 0
    private var blocked = 0
    private var released = false

    /// Lookups waiting (or that waited) for the release.
    var blockedLookups: Int { condition.withLock { blocked } }
    var isReleased: Bool { condition.withLock { released } }

    func pass() {
        condition.lock()
        defer { condition.unlock() }
        lookups += 1
        guard lookups > 1 else { return }
        blocked += 1
        while !released { condition.wait() }
    }

    func release() {
        condition.lock()
        released = true
        condition.broadcast()
        condition.unlock()
    }
}
