import Foundation
import PushCore
import QueueProtocol
import RedisClient
import TestSupport
import XCTest

/// A poison suspect (a message whose earlier holders died `recovery.max_deliveries - 1` times) is claimed alone,
/// so that if it kills this worker too nothing else of its shard is held with it. With `redis.shards` it waits
/// for its own shard's work only: steady traffic on another shard must not keep it waiting.
final class PoisonSuspectShardTests: XCTestCase {
    func testASuspectIsDeliveredWhileAnotherShardStaysBusy() async throws {
        let redis = try RedisServer()
        defer { redis.kill() }
        // 100 to 500 ms per answer and 100 in flight: a few hundred messages a second, so shard 1's backlog lasts
        // many seconds. Its oldest message is answered 500 and retried for minutes (retry.* defaults): shard 1 always
        // has work in flight, however the answers of the rest happen to bunch up on a loaded machine.
        let apns = try await EmulatorStandIn {
            $0.latencyMillis = 100
            $0.jitterMillis = 400
        }
        let client = RedisConnection(url: redis.url, name: "suspect-client")
        addTeardownBlock { await client.close() }
        let shards = ["push:{0}", "push:{1}"]
        let keys = shards.map { RedisKeys(prefix: $0) }
        let backlog = 8000
        try await client.lpush(keys[1].queue, [messageJSON(id: "retried", tokens: [token("5000", 1)])])
        try await client.lpush(keys[1].queue, (0..<backlog).map { messageJSON(id: "busy-\($0)", tokens: [token("b1", $0)]) })

        // The suspect's holders died twice (max_deliveries 3): the first death is counted by a recovery here, the
        // second by the running worker's recovery, which finds the second holder silent once it is registered.
        let suspectToken = token("5a", 1)
        try await client.lpush(keys[0].queue, [messageJSON(id: "suspect", tokens: [suspectToken])])
        func holder(_ id: String) -> WorkQueue { WorkQueue(connection: client, keys: keys[0], workerID: id) }
        _ = try await holder("dead1").claim(maxCount: 10, maxBytes: 10_000, allowIsolated: true)
        _ = try await holder("dead1").recover(worker: "dead1", onlyIfDead: false, countDeath: true)
        let taken = try await holder("dead2").claim(maxCount: 10, maxBytes: 10_000, allowIsolated: true)
        XCTAssertEqual(taken.elements.count, 1)

        let directory = makeTemporaryDirectory("suspect")
        let worker = try WorkerProcess(environment: apns.workerEnvironment(redis: redis, [
            "REDIS_SHARDS": shards.joined(separator: ","), "WORKER_ID": "live",
            "COLLECTOR_MAX_IN_FLIGHT": "100", "COLLECTOR_WINDOW_MS": "10", "REDIS_HEARTBEAT_TTL_MS": "1000",
            "SHUTDOWN_TIMEOUT_S": "2",
        ]), logFile: "\(directory)/live.log")
        try await eventually(timeout: .seconds(30)) { apns.answeredCount >= 100 }
        // Only now is the dead holder registered (long silent): its suspect comes back while shard 1 is busy.
        try await client.execute(["ZADD", keys[0].workers, "1", "dead2"])

        try await eventually(timeout: .seconds(20)) { apns.answered().contains { $0.token == suspectToken } }
        let waiting = try await client.length(keys[1].queue)
        let held = try await client.claimedCount(keys[1].processing(worker: "live"))
        let delivered = apns.answered().filter { $0.token.hasPrefix("b1") }.count
        printFigure("poison suspect: shard 1 had \(delivered) of its \(backlog) messages answered and \(waiting) queued when the wait for the suspect ended")
        XCTAssertGreaterThan(waiting, 0, "the suspect was delivered while the other shard still had work queued")
        XCTAssertGreaterThan(held, 0, "and in flight")
        XCTAssertTrue(worker.log.contains("returned a dead worker's claims"), worker.log.suffix(2000).description)
        let dead = try await client.length(keys[0].deadLetters)
        XCTAssertEqual(dead, 0, "a suspect is not poison yet")

        worker.signal(SIGTERM)
        let status = await worker.waitForExit(timeout: 20)
        XCTAssertEqual(status, 0, worker.log.suffix(3000).description)
        await apns.stop()
    }
}
