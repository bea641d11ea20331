import Foundation
import PushCore
import QueueProtocol
import RedisClient
import TestSupport
import XCTest

/// `retention.parked_max`: a parked list holds at most so many messages; what its app claims past it while it still
/// cannot send is a replayable dead letter `ParkedListFull`, never lost, and the parked ones go out when it can.
final class ParkedCapTests: XCTestCase {
    func testAFullParkedListDeadLettersWhatWouldBeParkedAndLosesNothing() async throws {
        let redis = try RedisServer()
        defer { redis.kill() }
        let fcm = try await FCMStandIn()
        fcm.fcm.setTokenEndpointDown(true)  // no access token: FCM cannot send
        let client = RedisConnection(url: redis.url, name: "test-client")
        addTeardownBlock { await client.close() }
        let keys = RedisKeys()
        let parkedKey = keys.parked(provider: .fcm, topic: FCMStandIn.topic, lane: .chat)
        // 40 messages of 100 tokens in a pipeline of 1,000 tokens: 10 held in the worker, the rest claimed later.
        let total = 40
        try await client.lpush(keys.queue, (0..<total).map { m in
            fcmMessageJSON(id: "cap-\(m)", tokens: (0..<100).map { fcmToken("cap", m * 100 + $0) })
        })
        let worker = try WorkerProcess(environment: fcm.workerEnvironment(redis: redis, [
            "WORKER_ID": "cap", "COLLECTOR_MAX_IN_FLIGHT": "1000", "RETENTION_PARKED_MAX": "5", "SHUTDOWN_TIMEOUT_S": "3",
        ]), logFile: makeTemporaryDirectory("parked-cap") + "/worker.log")
        defer { worker.signal(SIGKILL) }
        // Every message claimed and in one place: held by the worker (claimed), parked, or a dead letter.
        try await eventually(timeout: .seconds(60)) {
            let queued = try await client.length(keys.queue)
            let dead = try await client.length(keys.deadLetters)
            let held = try await client.claimedCount(keys.processing(worker: "cap"))
            let parked = try await client.length(parkedKey)
            return queued == 0 && dead > 0 && held + parked + dead == total
        }
        let parked = try await client.length(parkedKey)
        let letters = try await client.strings(keys.deadLetters).compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        XCTAssertLessThanOrEqual(parked, 10, "the cap, and what was parked within the second before the list was measured")
        XCTAssertTrue(letters.allSatisfy { $0["reason"] as? String == "ParkedListFull" }, "\(letters.map { $0["reason"] ?? "" })")
        XCTAssertEqual(fcm.fcm.stats.requests, 0, "nothing of FCM was sent")
        let finalLetters = try await client.strings(keys.deadLetters).count
        XCTAssertGreaterThan(finalLetters, 0)

        // The app can send again: what was held and parked goes out; the dead letters wait for a replay. (A message
        // put back while the app's state still flickered may be parked again past the cap, and be a dead letter
        // too: every message is delivered or a dead letter, once.)
        fcm.fcm.setTokenEndpointDown(false)
        let deadLetterCount = Locked(0)
        try await eventually(timeout: .seconds(120)) {
            let queued = try await client.length(keys.queue)
            let parkedNow = try await client.length(parkedKey)
            let held = try await client.claimedCount(keys.processing(worker: "cap"))
            let dead = try await client.length(keys.deadLetters)
            deadLetterCount.withLock { $0 = dead }
            return queued == 0 && parkedNow == 0 && held == 0 && fcm.fcm.stats.distinctTokensDelivered == (total - dead) * 100
        }
        let deadLetters = deadLetterCount.withLock { $0 }
        XCTAssertEqual(fcm.fcm.stats.duplicates, [:])
        worker.signal(SIGTERM)
        _ = await worker.waitForExit(timeout: 30)
        let replay = try WorkerProcess(environment: ["REDIS_URL": redis.urlString], arguments: ["dlq", "replay", "--yes"],
                                       logFile: makeTemporaryDirectory("parked-cap-replay") + "/tool.log")
        let replayed = await replay.waitForExit(timeout: 60)
        XCTAssertEqual(replayed, 0, replay.log)
        try await assertEqual(try await client.length(keys.queue), deadLetters, "every dead letter back on the queue")
        await fcm.stop()
    }
}
