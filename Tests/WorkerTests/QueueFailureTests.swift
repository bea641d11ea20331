import Foundation
import PushCore
import QueueProtocol
import RedisClient
import TestSupport
import XCTest

/// The queue protocol under real failures of the `worker` binary: holders killed with SIGKILL (poison
/// quarantine) and a Redis that is gone when the worker is told to stop.
final class QueueFailureTests: XCTestCase {
    let keys = RedisKeys()

    private func environment(_ redis: RedisServer, _ apns: EmulatorStandIn, _ extra: [String: String]) -> [String: String] {
        var env = [
            "REDIS_URL": redis.urlString, "APNS_ENDPOINT": apns.endpoint, "APNS_CA_FILE": apns.caFile,
            "APNS_APPS_0_TOPIC": "com.example.chat", "APNS_APPS_0_TEAM_ID": EmulatorStandIn.teamID,
            "APNS_APPS_0_KEY_ID": EmulatorStandIn.keyID, "APNS_APPS_0_KEY_FILE": apns.keyFile,
            "REDIS_HEARTBEAT_TTL_MS": "1000", "COLLECTOR_WINDOW_MS": "20",
        ]
        env.merge(extra) { $1 }
        return env
    }

    func testAMessageWhoseHoldersKeepDyingIsQuarantinedAndTheOthersAreDelivered() async throws {
        let redis = try RedisServer()
        defer { redis.kill() }
        // Every answer takes 3 s, so a worker still holds what it claimed when it is killed.
        let apns = try await EmulatorStandIn { $0.latencyMillis = 3000 }
        let client = RedisConnection(url: redis.url, name: "poison-client")
        addTeardownBlock { await client.close() }
        let directory = makeTemporaryDirectory("poison")
        let poison = messageJSON(id: "p-1", tokens: [token("a1", 1)])
        let other = messageJSON(id: "g-1", tokens: [token("a1", 2)])
        try await client.lpush(keys.queue, [poison, other])

        var workers: [WorkerProcess] = []
        func holder(_ n: Int, holding count: Int) async throws {
            let worker = try WorkerProcess(environment: environment(redis, apns, ["WORKER_ID": "holder\(n)"]),
                                           logFile: "\(directory)/holder\(n).log")
            workers.append(worker)
            try await eventually(timeout: .seconds(20)) {
                try await client.claimedCount(self.keys.processing(worker: "holder\(n)")) == count
            }
            worker.signal(SIGKILL)
            _ = await worker.waitForExit(timeout: 5)
        }
        try await holder(1, holding: 2)  // both held: each has one death
        try await holder(2, holding: 2)  // both held again: two deaths each
        try await holder(3, holding: 1)  // from max_deliveries - 1 deaths on, each is claimed alone: the older, p-1
        let last = try WorkerProcess(environment: environment(redis, apns, ["WORKER_ID": "survivor"]),
                                     logFile: "\(directory)/survivor.log")
        try await eventually(timeout: .seconds(30)) {
            let queued = try await client.length(self.keys.queue)
            let held = try await client.execute(["KEYS", "push:processing:*"]).array ?? []
            let dead = try await client.length(self.keys.deadLetters)
            return queued == 0 && held.isEmpty && dead == 1
        }
        let dead = try await client.strings(keys.deadLetters).map(jsonObject)
        XCTAssertEqual(dead.first?["reason"] as? String, "PoisonMessage")
        XCTAssertEqual(dead.first?["raw"] as? String, poison)
        XCTAssertTrue(last.log.contains("PoisonMessage") && last.log.contains("message_id=p-1"), last.log)
        XCTAssertTrue(apns.answered().contains { $0.token == token("a1", 2) && $0.status == 200 }, "g-1 was delivered")
        try await assertEqual(try await client.execute(["HLEN", keys.deliveries]).integer, 0, "no death count is left behind")
        last.signal(SIGTERM)
        let status = await last.waitForExit(timeout: 20)
        XCTAssertEqual(status, 0, last.log)
        await apns.stop()
    }

    func testShutdownWithRedisGoneExitsWithinTheDeadlineAndKeepsTheClaims() async throws {
        let redis = try RedisServer(persistent: true)
        defer { redis.kill() }
        // Answers come 1.5 s after the requests: Redis is gone by then, so their acknowledgements fail.
        let apns = try await EmulatorStandIn { $0.latencyMillis = 1500 }
        let client = RedisConnection(url: redis.url, name: "shutdown-client")
        addTeardownBlock { await client.close() }
        let directory = makeTemporaryDirectory("redis-gone")
        try await client.lpush(keys.queue, (0..<10).map { messageJSON(id: "r\($0)", tokens: [token("a1", $0)]) })
        let worker = try WorkerProcess(environment: environment(redis, apns, ["WORKER_ID": "stranded", "SHUTDOWN_TIMEOUT_S": "2"]),
                                       logFile: "\(directory)/worker.log")
        // Claimed, and the claim's reply reached the worker (a request is at APNs): Redis, killed the moment
        // it ran the claim, could otherwise take the reply with it, and nothing would be in flight.
        try await eventually(timeout: .seconds(20)) {
            try await client.claimedCount(self.keys.processing(worker: "stranded")) == 10
                && apns.emulator.stats.peakConcurrentStreams > 0
        }
        redis.kill()
        let stop = ContinuousClock.now
        worker.signal(SIGTERM)
        let status = await worker.waitForExit(timeout: 30)
        let took = ContinuousClock.now - stop
        XCTAssertEqual(status, 0, worker.log)
        XCTAssertLessThan(took, .seconds(2 + 3 + 3), "shutdown.timeout_s plus a few seconds:\n\(worker.log)")
        XCTAssertTrue(worker.log.contains("stay claimed for recovery"), worker.log)
        try redis.start()
        let reconnected = RedisConnection(url: redis.url, name: "after")
        addTeardownBlock { await reconnected.close() }
        try await assertEqual(try await reconnected.claimedCount(keys.processing(worker: "stranded")), 10,
                              "the claims stay for recovery (delivery is at least once)")
        await apns.stop()
    }
}
