import APNsProvider
import Foundation
import PushCore
import QueueProtocol
import RedisClient
import TestSupport
import XCTest

/// docs/transport.md: APNs unreachable for a while dead-letters nothing; the backlog waits in Redis (the queue,
/// or the app's parked list: docs/architecture.md, "Isolation") instead of turning into dead letters, and
/// everything is delivered once APNs is back.
final class APNsOutageTests: XCTestCase {
    func testAnOutageShorterThanTheRetryBudgetDeadLettersNothingAndKeepsTheBacklogInRedis() async throws {
        let redis = try RedisServer()
        let apns = try await EmulatorStandIn()
        let client = RedisConnection(url: redis.url, name: "test-client")
        addTeardownBlock { await client.close() }
        let keys = RedisKeys()
        let directory = makeTemporaryDirectory("outage")
        // A budget of at least 7.5 s (20 attempts from 50 ms doubling to 1 s, each at least half its
        // ceiling), three times the 2.5 s outage: a loaded machine's delays cannot make it run out.
        let worker = try WorkerProcess(environment: apns.workerEnvironment(redis: redis, [
            "RETRY_MAX_ATTEMPTS": "20", "RETRY_BASE_DELAY_MS": "50", "RETRY_MAX_DELAY_MS": "1000",
            "COLLECTOR_MAX_IN_FLIGHT": "50", "COLLECTOR_WINDOW_MS": "20", "APNS_REQUEST_TIMEOUT_MS": "1000",
            "WORKER_ID": "outage-worker",
        ]), logFile: directory + "/worker.log")
        defer { worker.signal(SIGKILL) }

        let total = 600
        try await client.lpush(keys.queue, (0..<total).map { messageJSON(id: "o\($0)", tokens: [token("a1", $0)]) })
        try await eventually(timeout: .seconds(30)) { apns.answeredCount >= 50 }
        await apns.stop()
        let queuedAtOutage = try await client.length(keys.queue)
        try await Task.sleep(for: .milliseconds(2500))
        // The worker holds at most its hard limit (twice the in-flight room, for work that waits); the rest of
        // the backlog waits in Redis, in the queue or parked.
        let parked = RedisKeys().parked(provider: .apns, topic: "com.example.chat", lane: .chat)
        let inRedisAfterOutage = try await client.length(keys.queue) + (try await client.length(parked))
        XCTAssertGreaterThan(inRedisAfterOutage, 0, "the backlog waits in Redis")
        XCTAssertGreaterThanOrEqual(inRedisAfterOutage, queuedAtOutage - 2 * 50 - 1, "no more than the hard limit held")
        let deadDuringOutage = try await client.length(keys.deadLetters)
        XCTAssertEqual(deadDuringOutage, 0)

        try await apns.restart()
        try await eventually(timeout: .seconds(60)) {
            let queued = try await client.length(keys.queue) + (try await client.length(parked))
            let claimed = try await client.claimedCount(keys.processing(worker: "outage-worker"))
            return queued == 0 && claimed == 0 && Set(apns.answered().filter { $0.status == 200 }.map(\.token)).count == total
        }
        let deadLetters = try await client.strings(keys.deadLetters)
        XCTAssertEqual(deadLetters, [], "nothing dead-lettered by a short outage")
        await apns.stop()
        redis.kill()
    }
}
