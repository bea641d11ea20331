import Foundation
import Logging
import PushCore
import QueueProtocol

/// Keeps this worker's liveness key and registry entry fresh, and returns the claims of workers whose
/// key has expired (killed, even by SIGKILL, or cut off) to the queue, so nothing they held is lost.
/// Beating and recovery run on separate connections, so a long recovery never delays a beat (a late beat
/// would let peers take this worker's live claims). Dead workers are found in the registry
/// (`push:workers`), never by scanning the keyspace.
public struct Heartbeat: Sendable {
    public let queue: WorkQueue
    public let recoveryQueue: WorkQueue
    public let ttlMillis: Int
    public let logger: Logger
    /// Told whether the last beat reached Redis: readiness follows this shard's Redis.
    public let readiness: Readiness?

    public init(queue: WorkQueue, recoveryQueue: WorkQueue, ttlMillis: Int, logger: Logger, readiness: Readiness? = nil) {
        self.queue = queue
        self.recoveryQueue = recoveryQueue
        self.ttlMillis = ttlMillis
        self.logger = logger
        self.readiness = readiness
    }

    public var unreachable: Readiness.Condition { .redisUnreachable(shard: queue.keys.queue) }

    private var info: String {
        "{\"host\":\"\(ProcessInfo.processInfo.hostName)\",\"pid\":\(getpid()),\"seen\":\(WallClock.nowMillis())}"
    }

    /// Writes the key and the registry entry once; throws if Redis cannot be reached.
    public func beatOnce() async throws {
        try await queue.beat(ttlMillis: ttlMillis, info: info)
    }

    /// Beats every third of the TTL and looks for dead workers every two thirds, until cancelled.
    public func run() async {
        async let recovering: Void = recoveryLoop()
        while !Task.isCancelled {
            do {
                try await beatOnce()
                readiness?.clear(unreachable)
            } catch {
                readiness?.set(unreachable)
                logger.error("heartbeat failed; retrying", metadata: ["error": "\(error)"])
            }
            try? await Task.sleep(for: .milliseconds(max(100, ttlMillis / 3)))
        }
        await recovering
    }

    private func recoveryLoop() async {
        while !Task.isCancelled {
            do {
                try await recoverDeadWorkers()
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
            PushMetrics.shared.notifications(outcome: "dead_letter", reason: "PoisonMessage", count: recovery.poisoned)
            logger.error("dead-lettered messages whose holders died \(recoveryQueue.maxDeliveries) times (PoisonMessage)", metadata: [
                "worker": "\(worker)", "messages": "\(recovery.poisoned)",
                "message_id": "\(recovery.poisonedIDs.prefix(20).map { Printable.clipped($0, to: 128) }.joined(separator: ","))",
            ])
        }
    }
}
