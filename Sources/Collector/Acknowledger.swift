import Logging
import PushCore
import QueueProtocol
import Synchronization

/// Everything the acknowledging side hears, in one stream so that a message's registration is always
/// seen before any of its results.
public enum AcknowledgerEvent: Sendable {
    case claimed([ClaimRegistration])
    case result(PipelineResult)
    /// Asks for claimed elements this worker no longer tracks (a claim whose reply was lost). Ask with
    /// `findOrphans()`, which is answered even when the Acknowledger has stopped.
    case findOrphans(CheckedContinuation<[ClaimedElement], Never>)
    /// The heartbeat reached Redis after the lease lapsed: which tracked claims did recovery take away?
    /// Answers the ids of the messages it marked lost, or nil if the processing hash could not be read.
    case confirmOwnership(CheckedContinuation<[String]?, Never>)
    case flushDue
}

extension AsyncStream<AcknowledgerEvent>.Continuation {
    /// Asks the Acknowledger fed by this input for claimed elements it does not track (a claim whose reply
    /// was lost). Once its input has ended the question would never be read: the answer is then empty, as
    /// nothing would acknowledge them any more; they stay in the processing hash, where the graceful return
    /// or recovery finds them.
    public func findOrphans() async -> [ClaimedElement] {
        await withCheckedContinuation { reply in
            if case .enqueued = yield(.findOrphans(reply)) { return }
            reply.resume(returning: [])
        }
    }
}

/// Acknowledges finished messages in batches: plain deliveries are deleted from the processing hash with
/// HDEL, and messages with outcome records go through one script call that removes each together with its
/// records (`WorkQueue.acknowledge`); then the rest of their capacity is released to the collector
/// (each token's room comes back as soon as the token has its outcome).
public final class Acknowledger: Sendable {
    public let events: AsyncStream<AcknowledgerEvent>
    public let input: AsyncStream<AcknowledgerEvent>.Continuation
    private let queue: WorkQueue
    private let gate: CapacityGate
    private let filteredCap: Int
    private let logger: Logger
    private let counts: SharedCounts
    private let abandoned = Atomic(false)
    /// After the deadline a write failed: Redis is silent, and every later flush leaves its messages claimed at
    /// once instead of waiting for the interrupt again (each wait was a quarter second, once per batch: a
    /// stopped Redis with thousands in flight held the exit 1.5 s past the deadline).
    private let gaveUp = Atomic(false)
    /// Messages left claimed for recovery because Redis was silent after the deadline.
    private let leftClaimed = Atomic(0)
    /// `redis.wait_replicas` and `redis.wait_timeout_ms`: replicas each acknowledgement waits for (0: none).
    private let replication: (replicas: Int, timeoutMillis: Int)
    /// The last wait fell short: logged once when it starts and once when it ends, not at every flush.
    private let replicationShort = Atomic(false)
    /// Told which messages were taken over (dropped unsent) and when the last of their tokens is accounted for.
    private let lease: OwnershipLease?
    /// The index of the shard whose messages this acknowledger writes: the gate counts their room per shard.
    private let shard: Int
    /// How long a small batch of acknowledgements waits for company.
    static let flushDelay = Duration.milliseconds(10)

    public init(queue: WorkQueue, gate: CapacityGate, filteredCap: Int, counts: SharedCounts, logger: Logger,
                lease: OwnershipLease? = nil, replication: (replicas: Int, timeoutMillis: Int) = (0, 100), shard: Int = 0) {
        self.replication = replication
        self.shard = shard
        (events, input) = AsyncStream.makeStream(of: AcknowledgerEvent.self)
        self.lease = lease
        self.queue = queue
        self.gate = gate
        self.filteredCap = filteredCap
        self.counts = counts
        self.logger = logger
    }

    /// Stops retrying writes that fail (the shutdown deadline has passed): what is not acknowledged stays
    /// in the processing hash, where recovery finds it.
    public func abandon() { abandoned.store(true, ordering: .relaxed) }

    /// Whether a write failed after the deadline (Redis silent): the exit need not wait for Redis again.
    public var gaveUpOnRedis: Bool { gaveUp.load(ordering: .relaxed) }

    /// Runs until the input is finished and every completed message has been written. Its flush timers are
    /// child tasks of this call: none outlives it.
    public func run() async {
        await withDiscardingTaskGroup { timers in
            await acknowledge(timers: &timers)
            timers.cancelAll()
        }
    }

    private func acknowledge(timers: inout DiscardingTaskGroup) async {
        var ledger = OutcomeLedger(workerID: queue.workerID)
        var pending: [CompletedMessage] = []
        var flushScheduled = false
        for await event in events {
            switch event {
            case .claimed(let claims):
                for claim in claims where !ledger.register(claim, into: &pending) {
                    logger.error("a claim sequence was handed out twice; the message tracked under it is kept",
                                 metadata: ["seq": "\(claim.claimSequence)", "message_id": "\(claim.messageID)"])
                }
            case .result(.resolved(let resolutions)):
                for resolution in resolutions { ledger.resolve(resolution, into: &pending) }
            case .result(.filtered(let seqs, _, let topic, let word)):
                for seq in seqs { ledger.filter(seq: seq, topic: topic, word: word, into: &pending) }
            case .findOrphans(let reply):
                await flush(&pending, &ledger)
                reply.resume(returning: await orphans(tracked: ledger.trackedSequences))
            case .confirmOwnership(let reply):
                await flush(&pending, &ledger)
                reply.resume(returning: await confirmOwnership(&ledger))
            case .flushDue:
                flushScheduled = false
                await flush(&pending, &ledger)
            }
            // Small batches go out after a short delay so that many acks share one script call: Redis's cost
            // per message is mostly per call, and a few milliseconds more of holding changes nothing else.
            if pending.count >= 512 {
                await flush(&pending, &ledger)
            } else if !pending.isEmpty && !flushScheduled {
                flushScheduled = true
                let input = self.input
                timers.addTask {
                    guard (try? await Task.sleep(for: Self.flushDelay)) != nil else { return }
                    input.yield(.flushDue)
                }
            }
            // push_notifications_total, counted here where each message's app is known: once per distinct key.
            let outcomes = ledger.takeOutcomes()
            if !outcomes.isEmpty { PushMetrics.shared.notifications(outcomes) }
            let resolved = ledger.takeReleased()
            if resolved.chat > 0 { await gate.release(resolved.chat, lane: .chat, shard: shard) }
            if resolved.bulk > 0 { await gate.release(resolved.bulk, lane: .bulk, shard: shard) }
            counts.store(ledger.snapshot)
        }
        await flush(&pending, &ledger)
        counts.store(ledger.snapshot)
        let left = leftClaimed.load(ordering: .relaxed)
        if left > 0 {
            logger.warning("shutdown deadline passed with Redis unreachable; unacknowledged messages stay claimed for recovery",
                           metadata: ["messages": "\(left)"])
        }
    }

    /// Asks the heartbeat's question for it: the processing hash's fields against what the ledger tracks.
    /// Nothing can be acknowledged meanwhile (this actor is busy), so a missing field means recovery.
    public func confirmOwnership() async -> [String]? {
        await withCheckedContinuation { reply in
            if case .terminated = input.yield(.confirmOwnership(reply)) { reply.resume(returning: nil) }
        }
    }

    private func confirmOwnership(_ ledger: inout OutcomeLedger) async -> [String]? {
        guard let held = try? await queue.claimedSequences() else { return nil }
        let lost = ledger.markLost(keeping: Set(held))
        lease?.revoke(lost)
        return ledger.messageIDs(lost)
    }

    private func flush(_ pending: inout [CompletedMessage], _ ledger: inout OutcomeLedger) async {
        // Messages taken over by another worker are only released: their new holder acknowledges them.
        let lost = pending.filter(\.lost)
        if !lost.isEmpty {
            pending.removeAll(where: \.lost)
            lease?.forget(lost.map(\.pipelineSeq))
            await release(lost)
        }
        guard !pending.isEmpty else { return }
        var backoff = Backoff.redisReconnect(baseMillis: 50, maxMillis: 2000)
        var retried = false
        while true {
            if gaveUp.load(ordering: .relaxed) {
                leftClaimed.add(pending.count, ordering: .relaxed)
                break
            }
            do {
                let acknowledged = try await queue.acknowledge(pending, filteredCap: filteredCap)
                if acknowledged < pending.count && retried {
                    // The failed attempt may have been applied with only its reply lost (Redis killed or the
                    // connection cut after the script ran): the retry then finds those messages gone.
                    logger.notice("acknowledgement retried after an error: some messages were already acknowledged (the first attempt applied before its reply was lost) or recovered elsewhere; nothing was written twice",
                                  metadata: ["expected": "\(pending.count)", "acknowledged": "\(acknowledged)"])
                } else if acknowledged < pending.count {
                    logger.warning("some messages were no longer claimed by this worker (recovered elsewhere); their outcomes were not written twice",
                                   metadata: ["expected": "\(pending.count)", "acknowledged": "\(acknowledged)"])
                }
                ledger.noteAcknowledged(acknowledged)
                PushMetrics.shared.messagesAcknowledged.increment(by: acknowledged)
                await waitForReplicas(messages: pending.count)
                break
            } catch {
                // The processing hash still holds these messages, so waiting loses nothing; once the shutdown
                // deadline has passed they stay there for recovery instead of holding the exit.
                if abandoned.load(ordering: .relaxed) {
                    gaveUp.store(true, ordering: .relaxed)
                    leftClaimed.add(pending.count, ordering: .relaxed)
                    break
                }
                retried = true
                logger.error("acknowledgement failed; retrying", metadata: ["error": "\(error)", "messages": "\(pending.count)"])
                try? await Task.sleep(for: .milliseconds(backoff.next()))
            }
        }
        await release(pending)
        pending.removeAll(keepingCapacity: true)
    }

    /// With `redis.wait_replicas`: holds the messages' room until replicas have their acknowledgement, so a
    /// failover right after it does not bring them back. A shortfall is counted, never retried: the
    /// acknowledgement stands on the primary either way.
    private func waitForReplicas(messages: Int) async {
        guard replication.replicas > 0 else { return }
        var reached = -1
        do {
            reached = try await queue.waitForReplicas(replication.replicas, timeoutMillis: replication.timeoutMillis)
        } catch {
            logger.debug("WAIT after an acknowledgement failed", metadata: ["error": "\(error)"])
        }
        if reached >= replication.replicas {
            if replicationShort.exchange(false, ordering: .relaxed) {
                logger.info("acknowledgements reach redis.wait_replicas replicas again", metadata: ["replicas": "\(reached)"])
            }
            return
        }
        PushMetrics.shared.redisWaitShortfalls.increment()
        if !replicationShort.exchange(true, ordering: .relaxed) {
            logger.warning("acknowledgements are not reaching redis.wait_replicas replicas within redis.wait_timeout_ms; a failover now would send them again (counted in push_redis_wait_shortfalls_total)",
                           metadata: ["replicas": "\(max(0, reached))", "wanted": "\(replication.replicas)", "messages": "\(messages)"])
        }
    }

    /// Gives the messages' room back to the collector, each lane its own.
    private func release(_ messages: [CompletedMessage]) async {
        // Sums in place: filtering each lane's messages into an array of their own copied every message (and
        // its growing arrays were most of the allocator's consolidation work on the pool threads).
        for lane in Lane.allCases {
            var notifications = 0
            var bytes = 0
            var any = false
            for message in messages where Lane.of(pipelineSeq: message.pipelineSeq) == lane {
                notifications += message.notifications
                bytes += message.bytes
                any = true
            }
            guard any else { continue }
            await gate.release(notifications, bytes: bytes, lane: lane, shard: shard)
        }
    }

    /// Elements in the processing hash that the ledger does not know: claimed by a call whose reply was lost.
    private func orphans(tracked: Set<UInt64>) async -> [ClaimedElement] {
        var backoff = Backoff.redisReconnect(baseMillis: 50, maxMillis: 2000)
        while !abandoned.load(ordering: .relaxed) {
            do {
                let unknown = try await queue.claimedSequences().filter { !tracked.contains($0) }.sorted()
                return try await queue.claimedElements(unknown)
            } catch {
                logger.error("cannot read the processing hash; retrying", metadata: ["error": "\(error)"])
                try? await Task.sleep(for: .milliseconds(backoff.next()))
            }
        }
        return []
    }
}
