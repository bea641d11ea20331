import Foundation
import PushCore
import PushEmulator
import QueueProtocol
import RedisClient
import TestSupport
import XCTest

/// The vendors count an app's rate across every sender: three workers sending for one Xiaomi app at
/// `requests_per_s: 200` together stay within 200 requests a second, as the vendor's one-second windows count them
/// (by the end of any second since the messages were queued, at most the rate times the seconds passed, plus the
/// bucket's twentieth of a second, arrived; three workers on their own rates would send 600 a second).
final class FleetRateLimitTests: XCTestCase {
    func testThreeWorkersKeepAnAppToItsRateTogether() async throws {
        let redis = try RedisServer()
        defer { redis.kill() }
        let vendors = try await ChinaVendorStandIn()
        let client = RedisConnection(url: redis.url, name: "test-client")
        addTeardownBlock { await client.close() }
        let keys = RedisKeys()
        let directory = makeTemporaryDirectory("fleet-rate")
        // Few messages in flight per worker, so that all three share the work.
        let workers = try (0..<3).map { n in
            try WorkerProcess(environment: vendors.workerEnvironment(redis: redis, [
                "WORKER_ID": "rate\(n)", "XIAOMI_APPS_0_REQUESTS_PER_S": "200", "COLLECTOR_MAX_IN_FLIGHT": "100",
                "SHUTDOWN_TIMEOUT_S": "3",
            ]), logFile: directory + "/worker\(n).log")
        }
        defer { workers.forEach { $0.signal(SIGKILL) } }
        try await eventually(timeout: .seconds(60)) { try await client.execute(["ZCARD", keys.workers]).integer == 3 }
        // One request per message: one token each, a body of its own (nothing merges).
        let total = 1400
        let queuedAt = Date().timeIntervalSince1970
        try await client.lpush(keys.queue, (0..<total).map { n in
            vendorMessageJSON(id: "rate-\(n)", provider: "xiaomi", tokens: [vendorToken("rate", n)], body: "m\(n)")
        })
        let stats = vendors.emulator.xiaomi.stats
        try await eventually(timeout: .seconds(120)) { stats.delivered >= total }
        let bySecond = stats.requestsBySecond.sorted { $0.key < $1.key }
        printFigure("fleet rate (3 workers, requests_per_s 200): requests per second \(bySecond.map(\.value))")
        // The budget grants on Redis's clock, before a request leaves; the vendor counts it when it answers, later.
        // So what was answered by the end of a second was granted before it, and no more than 200 a second since
        // the queue had work (the bucket starts empty and holds a twentieth of a second; 20 covers that and the
        // clocks' rounding). This holds however the machine schedules the workers: a worker held up sends late,
        // never more. On a quiet machine each second after the first sees 199 to 201.
        var answered = 0
        for (second, count) in bySecond {
            answered += count
            let elapsed = max(0, Double(second + 1) - queuedAt)
            XCTAssertLessThanOrEqual(Double(answered), 200 * elapsed + 20,
                                     "by the end of second \(second), \(elapsed) s after queueing: \(bySecond.map(\.value))")
        }
        XCTAssertEqual(stats.delivered, total)
        XCTAssertEqual(stats.duplicates, [:])
        XCTAssertEqual(stats.count(code: "10027"), 0)
        workers.forEach { $0.signal(SIGTERM) }
        for worker in workers { _ = await worker.waitForExit(timeout: 30) }
        for (n, worker) in workers.enumerated() {
            XCTAssertFalse(worker.log.contains(" delivered=0 "), "worker \(n) took part: \(worker.log.suffix(300))")
            XCTAssertTrue(worker.log.contains("worker stopped"), "worker \(n) stopped")
        }
        await vendors.stop()
    }
}
