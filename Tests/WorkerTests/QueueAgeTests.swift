import Foundation
import PushCore
import PushEmulator
import QueueProtocol
import RedisClient
import TestSupport
import XCTest

/// `push_queue_oldest_age_seconds{list}`: how long the oldest message of each input list has waited (its
/// `enqueued_at`), which the length alone does not say: a short queue nobody claims grows old.
final class QueueAgeTests: XCTestCase {
    func testTheOldestWaitingMessagesAgeIsAGauge() async throws {
        let redis = try RedisServer()
        defer { redis.kill() }
        // Huawei answers after a minute: with room for one token, the worker holds one message and the rest wait.
        let vendors = try await ChinaVendorStandIn { $0.huawei.faults.latencyMillis = 60_000 }
        let client = RedisConnection(url: redis.url, name: "test-client")
        addTeardownBlock { await client.close() }
        let keys = RedisKeys()
        let enqueued = Int64(Date().timeIntervalSince1970 * 1000) - 120_000
        try await client.lpush(keys.queue, (0..<3).map { n in
            vendorMessageJSON(id: "old-\(n)", provider: "huawei", tokens: [vendorToken("old", n)], body: "old \(n)",
                              extra: ["enqueued_at": enqueued])
        })
        let port = freePort()
        let worker = try WorkerProcess(environment: vendors.workerEnvironment(redis: redis, [
            "WORKER_ID": "aging", "COLLECTOR_MAX_IN_FLIGHT": "1", "HUAWEI_REQUEST_TIMEOUT_MS": "120000",
            "METRICS_LISTEN": "127.0.0.1:\(port)",
        ]), logFile: makeTemporaryDirectory("queue-age") + "/worker.log")
        defer { worker.signal(SIGKILL) }
        try await eventually(timeout: .seconds(30)) {
            let text = await httpGet("http://127.0.0.1:\(port)/metrics")?.body ?? ""
            return (prometheusSample(text, "push_queue_oldest_age_seconds", ["list": "queue"]) ?? 0) >= 120
        }
        let text = await httpGet("http://127.0.0.1:\(port)/metrics")?.body ?? ""
        XCTAssertEqual(prometheusSample(text, "push_queue_oldest_age_seconds", ["list": "bulk"]), 0, "an empty list")
        let waiting = try await client.length(keys.queue)
        XCTAssertGreaterThanOrEqual(waiting, 1, "still waiting")
        worker.signal(SIGKILL)
        await vendors.stop()
    }
}
