import Foundation
import Logging
import PushCore
import QueueProtocol

/// Keeps this worker's liveness key and registry entry fresh, and returns the claims of workers whose
/// key has expired (killed, even by SIGKILL, or cut off) to the queue, so nothing they held is lost.
/// Beating and recovery run on separate connections, and the beats' connection is theirs alone, so a long
/// recovery or a slow read of another loop never delays a beat (a late beat would let peers take this
/// worker's live claims). Nor does the ownership confirmation after a lapse, which waits for the Acknowledger
/// (`OwnershipConfirmation`). Dead workers are found in the registry (`push:workers`), never by scanning the
/// keyspace.
public struct Heartbeat: Sendable {
    public let queue: WorkQueue
    public let recoveryQueue: WorkQueue
    public let ttlMillis: Int
    public let logger: Logger
    /// Told whether the last beat reached Redis: readiness follows this shard's Redis.
    public let readiness: Readiness?
    /// Renewed after every confirmed beat (ownership fencing); `shard` is this heartbeat's index in it.
    public let lease: OwnershipLease?
    public let shard: Int
    /// After a lapse, asks the Acknowledger which claims recovery took away (the ids of the messages it
    /// marked lost; nil if Redis could not say).
    private let confirmOwnership: (@Sendable () async -> [String]?)?
    /// Since when (uptime nanoseconds, from the sending of the first beat of an unbroken run of confirmed
    /// beats) this worker has reached Redis; nil while it cannot. A Redis outage is not a worker's death: when
    /// Redis answers again every liveness key may have lapsed in the outage, peers' included, so this worker
    /// recovers others only once it has reached Redis for a whole TTL, time in which every live peer renews its
    /// own key. A worker that really died in the outage is recovered one TTL later; what a restart or failover
    /// longer than the TTL re-sends is only what was on the wire.
    private let reachableSince = Locked<UInt64?>(nil)

    public init(queue: WorkQueue, recoveryQueue: WorkQueue, ttlMillis: Int, logger: Logger, readiness: Readiness? = nil,
                lease: OwnershipLease? = nil, shard: Int = 0, confirmOwnership: (@Sendable () async -> [String]?)? = nil) {
        self.queue = queue
        self.recoveryQueue = recoveryQueue
        self.ttlMillis = ttlMillis
        self.logger = logger
        self.readiness = readiness
        self.lease = lease
        self.shard = shard
        self.confirmOwnership = confirmOwnership
    }

    public var unreachable: Readiness.Condition { .redisUnreachable(shard: queue.keys.queue) }

    private var info: String {
        "{\"host\":\"\(ProcessInfo.processInfo.hostName)\",\"pid\":\(getpid()),\"seen\":\(WallClock.nowMillis())}"
    }

    /// Writes the key and the registry entry once and renews the lease from the moment the beat was sent;
    /// throws if Redis cannot be reached. Used alone before anything is claimed (startup).
    public func beatOnce() async throws {
        let sentAt = OwnershipLease.now()
        try await queue.beat(ttlMillis: ttlMillis, info: info)
        lease?.renew(shard: shard, beatSentAt: sentAt, ttlMillis: ttlMillis)
    }

    /// One beat while claims may be held. If the lease lapsed before Redis confirmed this beat, peers may
    /// have returned this worker's claims to the queue: the lease is renewed only after the claims recovery
    /// took are marked lost (the transport drops them unsent). That is asked of the Acknowledger through
    /// `requests` and awaited by `confirmationLoop`, never here: the beats go on meanwhile, and keep the rest ours.
    func beatHoldingClaims(_ confirmation: OwnershipConfirmation, requests: AsyncStream<Int>.Continuation) async throws {
        let sentAt = OwnershipLease.now()
        try await queue.beat(ttlMillis: ttlMillis, info: info)
        guard let lease else { return }
        guard confirmOwnership != nil else {
            lease.renew(shard: shard, beatSentAt: sentAt, ttlMillis: ttlMillis)
            return
        }
        switch confirmation.beatConfirmed(sentAt: sentAt, now: OwnershipLease.now(), leaseLapsed: lease.lapsed(shard: shard)) {
        case .renew:
            lease.renew(shard: shard, beatSentAt: sentAt, ttlMillis: ttlMillis)
        case .confirm(let epoch):
            logger.warning("ownership lease lapsed (no heartbeat confirmed in time: paused, or cut off from Redis); this shard's claims are held until Redis says which are still ours",
                           metadata: ["queue": "\(queue.keys.queue)"])
            requests.yield(epoch)
        case .wait:
            break
        }
    }

    /// Answers the beats' requests for an ownership confirmation, one at a time (a request made while one is
    /// answered replaces any older one still waiting), until the requests end.
    private func confirmationLoop(_ confirmation: OwnershipConfirmation, requests: AsyncStream<Int>) async {
        guard let lease, let confirmOwnership else { return }
        for await epoch in requests {
            guard let lost = await confirmOwnership() else {
                confirmation.failed(epoch: epoch)
                logger.error("cannot read this worker's processing hash to confirm its claims; asking again at the next beat",
                             metadata: ["queue": "\(queue.keys.queue)"])
                continue
            }
            if !lost.isEmpty {
                PushMetrics.shared.claimsLost.increment(by: lost.count)
                logger.warning("dropped claims another worker took over while this one was paused or cut off from Redis; they are not sent here (their new holder sends them)", metadata: [
                    "queue": "\(queue.keys.queue)", "messages": "\(lost.count)",
                    "message_id": "\(lost.prefix(20).map { Printable.clipped($0, to: 128) }.joined(separator: ","))",
                ])
            }
            guard let renewFrom = confirmation.answered(epoch: epoch) else { continue }
            lease.renew(shard: shard, beatSentAt: renewFrom, ttlMillis: ttlMillis)
            if lost.isEmpty {
                logger.notice("ownership confirmed: no claim was taken over; sending resumes", metadata: ["queue": "\(queue.keys.queue)"])
            }
        }
    }

    /// Beats every third of the TTL and looks for dead workers every two thirds, until cancelled. Recovery and
    /// the ownership confirmation after a lapse run beside the beats, which never wait for either.
    public func run() async {
        let confirmation = OwnershipConfirmation(ttlMillis: ttlMillis)
        let (requests, requestInput) = AsyncStream.makeStream(of: Int.self, bufferingPolicy: .bufferingNewest(1))
        await withDiscardingTaskGroup { group in
            group.addTask { await recoveryLoop() }
            group.addTask { await confirmationLoop(confirmation, requests: requests) }
            while !Task.isCancelled {
                let sentAt = OwnershipLease.now()
                do {
                    try await beatHoldingClaims(confirmation, requests: requestInput)
                    reachableSince.withLock { $0 = $0 ?? sentAt }
                    readiness?.clear(unreachable)
                } catch {
                    reachableSince.withLock { $0 = nil }
                    readiness?.set(unreachable)
                    logger.error("heartbeat failed; retrying", metadata: ["error": "\(error)"])
                }
                try? await Task.sleep(for: .milliseconds(max(100, ttlMillis / 3)))
            }
            requestInput.finish()
        }
    }

    /// Whether this worker has reached Redis for a whole TTL without a break (see `reachableSince`).
    func reachedRedisForATTL(now: UInt64 = OwnershipLease.now()) -> Bool {
        guard let since = reachableSince.withLock({ $0 }) else { return false }
        return now >= since && now - since >= UInt64(max(0, ttlMillis)) * 1_000_000
    }

    private func recoveryLoop() async {
        while !Task.isCancelled {
            do {
                if reachedRedisForATTL() { try await recoverDeadWorkers() }
            } catch {
                logger.error("recovery failed; retrying", metadata: ["error": "\(error)"])
            }
            try? await Task.sleep(for: .milliseconds(max(200, ttlMillis * 2 / 3)))
        }
    }

    /// Returns every dead worker's claims to the queue (dead-lettering poison); the number returned.
    @discardableResult
    public func recoverDeadWorkers() async throws -> Int {
        var total = 0
        for worker in try await recoveryQueue.silentWorkers(olderThanMillis: ttlMillis) where worker != queue.workerID {
            let recovery = try await recoveryQueue.recover(worker: worker, onlyIfDead: true, countDeath: true)
            report(recovery, of: worker)
            total += recovery.returned
        }
        return total
    }

    /// Logs what a recovery did: returned claims at warning, poisoned messages at error with their ids.
    public func report(_ recovery: Recovery, of worker: String) {
        if recovery.returned > 0 {
            logger.warning("returned a dead worker's claims to the queue", metadata: ["worker": "\(worker)", "messages": "\(recovery.returned)"])
        }
        if recovery.poisoned > 0 {
            PushMetrics.shared.notifications(provider: .default, app: nil, outcome: "dead_letter", reason: "PoisonMessage",
                                             count: recovery.poisoned)
            logger.error("dead-lettered messages whose holders died \(recoveryQueue.maxDeliveries) times (PoisonMessage)", metadata: [
                "worker": "\(worker)", "messages": "\(recovery.poisoned)",
                "message_id": "\(recovery.poisonedIDs.prefix(20).map { Printable.clipped($0, to: 128) }.joined(separator: ","))",
            ])
        }
    }
}
