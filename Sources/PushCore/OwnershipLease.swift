import Dispatch
import Synchronization

/// Ownership fencing (docs/queue-protocol.md): whether this worker may still send what it claimed.
///
/// Each shard's heartbeat renews the lease after Redis confirms a beat, until the time the beat was sent plus
/// most of the TTL (`OwnershipLease.validFraction`), on the monotonic clock. A worker that was paused (SIGSTOP,
/// a frozen VM) or cut off from Redis finds its lease lapsed: the transport holds every request of that shard
/// and sends none of it, because peers may have returned those claims to the queue once the liveness key expired.
/// When the heartbeat reaches Redis again it first learns which claims recovery took away; those are `revoked`
/// and the transport drops their requests unsent; the rest is ours for as long as we keep beating, and the lease
/// is renewed.
///
/// Read by the transport thread once per loop (`revision` tells it when to copy), written by the heartbeats.
public final class OwnershipLease: Sendable {
    private struct State {
        /// Per shard: the monotonic time (DispatchTime nanoseconds) until which its claims may be sent.
        var validUntil: [UInt64]
        /// Pipeline seqs of messages whose claims recovery moved away: never to be sent by this worker.
        var revoked: Set<UInt64> = []
    }

    /// The share of the heartbeat TTL a confirmed beat lets the worker send for, counted from when the beat
    /// was sent (the key lives at least the TTL from then). The rest is the margin for a request that passed
    /// the check just before the lapse to reach the push service, and for the clocks of Redis and this host to differ.
    public static let validFraction = 0.8

    private let state: Locked<State>
    /// Bumped by every change, so a reader copies the state only when it changed.
    public let revision = Atomic<Int>(0)

    /// A lease for `shards` shards, lapsed until the first renewal.
    public init(shards: Int) {
        state = Locked(State(validUntil: Array(repeating: 0, count: max(1, min(shards, PipelineSeq.maxShards)))))
    }

    /// A lease that never lapses: a transport used on its own (tests, tools) without claims to fence.
    public static func unfenced() -> OwnershipLease {
        let lease = OwnershipLease(shards: PipelineSeq.maxShards)
        lease.state.withLock { $0.validUntil = Array(repeating: .max, count: PipelineSeq.maxShards) }
        return lease
    }

    public static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    /// Whether the shard's lease has lapsed: claims may have been taken over since.
    public func lapsed(shard: Int, now: UInt64 = OwnershipLease.now()) -> Bool {
        state.withLock { now >= $0.validUntil[index(shard, $0)] }
    }

    /// Until when (monotonic nanoseconds) the shard's claims may be sent, as of now.
    public func validUntil(shard: Int) -> UInt64 {
        state.withLock { $0.validUntil[index(shard, $0)] }
    }

    /// A beat sent at `sentAt` was confirmed by Redis: the shard's claims may be sent until `sentAt` plus
    /// `validFraction` of the TTL. Never shortens a lease already granted by a later beat.
    public func renew(shard: Int, beatSentAt sentAt: UInt64, ttlMillis: Int) {
        let span = UInt64(Double(max(1, ttlMillis)) * Self.validFraction * 1_000_000)
        state.withLock {
            let i = index(shard, $0)
            $0.validUntil[i] = max($0.validUntil[i], sentAt &+ span)
        }
        revision.add(1, ordering: .releasing)
    }

    /// Marks messages (pipeline seqs) as taken over by another worker: their requests are dropped unsent.
    public func revoke(_ seqs: [UInt64]) {
        guard !seqs.isEmpty else { return }
        state.withLock { $0.revoked.formUnion(seqs) }
        revision.add(1, ordering: .releasing)
    }

    /// Forgets revoked messages whose every token has been dropped (nothing of them is left to check).
    public func forget(_ seqs: [UInt64]) {
        guard !seqs.isEmpty else { return }
        state.withLock { $0.revoked.subtract(seqs) }
        revision.add(1, ordering: .releasing)
    }

    /// A copy for a reader that checks many requests: the deadlines per shard and the revoked messages.
    public func snapshot() -> (validUntil: [UInt64], revoked: Set<UInt64>) {
        state.withLock { ($0.validUntil, $0.revoked) }
    }

    private func index(_ shard: Int, _ state: State) -> Int { max(0, min(shard, state.validUntil.count - 1)) }
}
