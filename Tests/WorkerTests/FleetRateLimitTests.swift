import Foundation
import PushCore
import PushEmulator
import QueueProtocol
import RedisClient
import TestSupport
import XCTest

/// The vendors count an app's rate across every sender: three workers sending for one Xiaomi app at
/// `requests_per_s: 200` together stay within 200 requests a second, as the vendor's one-second windows count them
/// (the run's middle seconds average at most the rate; no second comes near the 600 three workers' own rates give).
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
        try await client.lpush(keys.queue, (0..<total).map { n in
            vendorMessageJSON(id: "rate-\(n)", provider: "xiaomi", tokens: [vendorToken("rate", n)], body: "m\(n)")
        })
        let stats = vendors.emulator.xiaomi.stats
        try await eventually(timeout: .seconds(120)) { stats.delivered >= total }
        let seconds = stats.requestsBySecond.sorted { $0.key < $1.key }.map(\.value)
        printFigure("fleet rate (3 workers, requests_per_s 200): requests per second \(seconds)")
        // The workers grant at 200 a second between them (on a quiet machine each second after the first sees 199 to
        // 201). When they arrive is the machine's: a worker held up for a moment sends its granted requests a little
        // late, into the next second, so one second may see a few more and its neighbour as many fewer. Each worker
        // on its own rate would show about 600 a second.
        let middle = Array(seconds.dropFirst().dropLast())
        XCTAssertGreaterThanOrEqual(middle.count, 4, "the run spans the seconds 1,400 requests at 200 a second take: \(seconds)")
        XCTAssertLessThanOrEqual(middle.reduce(0, +), 200 * middle.count + 20, "the app's rate over the run, and the bucket's burst: \(seconds)")
        XCTAssertLessThanOrEqual(seconds.dropFirst().max() ?? 0, 260, "no second near three workers' rates: \(seconds)")
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
