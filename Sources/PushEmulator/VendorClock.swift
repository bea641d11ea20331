import Foundation
import NIOConcurrencyHelpers

/// The time a vendor side judges by: wall time, unless a test froze or moved it. Access-token expiry, JWT
/// `iat`/`exp`, the per-second rate windows and a vendor's quota day all read it, so a test can cross an
/// hour or a vendor day at once instead of waiting for it, and can hold a rate window still.
public final class VendorClock: Sendable {
    private struct State {
        /// Seconds added to wall time.
        var offset: Double = 0
        /// When set, the time stands still here.
        var frozenAt: Double?
    }

    private let state = NIOLockedValueBox(State())

    public init() {}

    /// Seconds since 1970 as the vendor sees them.
    public var now: Double {
        state.withLockedValue { $0.frozenAt ?? Date().timeIntervalSince1970 + $0.offset }
    }

    /// Stops the clock where it is (or at `time`): rate windows then never roll over by themselves.
    public func freeze(at time: Double? = nil) {
        state.withLockedValue { state in
            state.frozenAt = time ?? state.frozenAt ?? (Date().timeIntervalSince1970 + state.offset)
        }
    }

    /// Moves the clock forward (or back), frozen or not.
    public func advance(by seconds: Double) {
        state.withLockedValue { state in
            if let frozen = state.frozenAt { state.frozenAt = frozen + seconds } else { state.offset += seconds }
        }
    }

    /// Runs with wall time again (no offset, not frozen).
    public func reset() { state.withLockedValue { $0 = State() } }
}
