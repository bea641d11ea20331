import PushCore

/// What a shard's beats and its ownership confirmation tell each other after the lease lapsed.
///
/// The confirmation (which claims did recovery take away?) is answered by the Acknowledger, which may be busy
/// retrying a write for a long time; the beats never wait for it, or the liveness key would expire and peers would
/// take every claim of a worker that is alive. So a beat only asks for a confirmation, and while one is pending
/// the beats go on without renewing the lease; the answer renews it.
///
/// An answer is good for the claims Redis held when the Acknowledger read them, which was after the beat that
/// asked. The lease it grants counts from the latest beat confirmed since, and only if the beats kept the key
/// alive all along (each confirmed before the one before it had lapsed): otherwise the key may have expired
/// meanwhile, and a peer may have taken claims after the read; a new confirmation is asked for.
final class OwnershipConfirmation: Sendable {
    /// What a confirmed beat does about the lease.
    enum Step: Equatable {
        /// The lease holds: renew it from this beat.
        case renew
        /// The lease lapsed (or lapsed again while a confirmation was pending): a confirmation for this epoch
        /// is asked for.
        case confirm(epoch: Int)
        /// A confirmation is pending and the beats kept the key alive since it was asked for: it renews the lease.
        case wait
    }

    private struct State {
        /// Until when (monotonic nanoseconds) the latest confirmed beat keeps the claims ours, like the lease.
        var beatsValidUntil: UInt64 = 0
        var latestSentAt: UInt64 = 0
        /// Bumped by every request: an answer to an older one renews nothing.
        var epoch = 0
        var pending = false
    }

    private let state = Locked(State())
    /// `OwnershipLease.validFraction` of the TTL, in nanoseconds.
    private let span: UInt64

    init(ttlMillis: Int) {
        span = UInt64(Double(max(1, ttlMillis)) * OwnershipLease.validFraction * 1_000_000)
    }

    /// A beat sent at `sentAt` was confirmed by Redis at `now`; `leaseLapsed`: the shard's lease had lapsed then.
    func beatConfirmed(sentAt: UInt64, now: UInt64, leaseLapsed: Bool) -> Step {
        state.withLock { state in
            let late = now >= state.beatsValidUntil
            state.beatsValidUntil = max(state.beatsValidUntil, sentAt &+ span)
            state.latestSentAt = max(state.latestSentAt, sentAt)
            if state.pending {
                if !late { return .wait }
            } else if !leaseLapsed {
                return .renew
            }
            state.pending = true
            state.epoch += 1
            return .confirm(epoch: state.epoch)
        }
    }

    /// The confirmation asked for in `epoch` was answered: the sent time of the beat to renew the lease from, or
    /// nil if a later request superseded it (its answer renews the lease).
    func answered(epoch: Int) -> UInt64? {
        state.withLock { state in
            guard state.epoch == epoch else { return nil }
            state.pending = false
            return state.latestSentAt
        }
    }

    /// The confirmation asked for in `epoch` could not be made (the processing hash could not be read): the next
    /// beat asks again, the lease still lapsed.
    func failed(epoch: Int) {
        state.withLock { state in
            if state.epoch == epoch { state.pending = false }
        }
    }
}
