import Foundation
import Logging
import PushCore

/// Keeps this worker's liveness key fresh and returns the claims of workers whose key has expired
/// (killed, even by SIGKILL, or cut off) to the queue, so nothing they held is lost.
public struct Heartbeat: Sendable {
    public let queue: WorkQueue
    public let ttlMillis: Int
    public let logger: Logger

    public init(queue: WorkQueue, ttlMillis: Int, logger: Logger) {
        self.queue = queue
        self.ttlMillis = ttlMillis
        self.logger = logger
    }

    private var info: String {
        "{\"host\":\"\(ProcessInfo.processInfo.hostName)\",\"pid\":\(getpid()),\"seen\":\(WallClock.nowMillis())}"
    }

    /// Writes the key once; throws if Redis cannot be reached.
    public func beatOnce() async throws {
        try await queue.beat(ttlMillis: ttlMillis, info: info)
    }

    /// Beats every third of the TTL and looks for dead workers every other beat, until cancelled.
    public func run() async {
        var round = 0
        while !Task.isCancelled {
            do {
                try await beatOnce()
                if round % 2 == 0 { try await recoverDeadWorkers() }
            } catch {
                logger.error("heartbeat failed; retrying", metadata: ["error": "\(error)"])
            }
            round += 1
            try? await Task.sleep(for: .milliseconds(max(100, ttlMillis / 3)))
        }
    }

    /// Returns every dead worker's processing list to the queue; the number of elements returned.
    @discardableResult
    public func recoverDeadWorkers() async throws -> Int {
        var total = 0
        for worker in try await queue.workersWithClaims() where worker != queue.workerID {
            let moved = try await queue.returnClaims(of: worker, onlyIfDead: true)
            if moved > 0 {
                logger.warning("returned a dead worker's claims to the queue", metadata: ["worker": "\(worker)", "messages": "\(moved)"])
                total += moved
            }
        }
        return total
    }
}
