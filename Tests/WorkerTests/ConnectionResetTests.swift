import Foundation
import PushCore
import QueueProtocol
import RedisClient
import TestSupport
import XCTest

/// Issue 32: a server that resets connections (RST) while the worker writes must not kill it. A write to a
/// reset socket raises SIGPIPE, whose default action ends the process; with `metrics.listen` empty nothing
/// else (swift-nio's listener) happens to ignore it. The worker lives, reconnects and delivers everything.
final class ConnectionResetTests: XCTestCase {
    func testAPNsResettingConnectionsWithMetricsOffKillsNothingAndLosesNothing() async throws {
        let redis = try RedisServer()
        defer { redis.kill() }
        let apns = try await EmulatorStandIn { $0.latencyMillis = 5 }
        let proxy = try BlackholeProxy(targetPort: apns.emulator.port)
        defer { proxy.stop() }
        let client = RedisConnection(url: redis.url, name: "test-client")
        addTeardownBlock { await client.close() }
        let keys = RedisKeys()
        let total = 3000
        try await client.lpush(keys.queue, (0..<total).map { messageJSON(id: "r\($0)", tokens: [token("a1", $0)]) })
        // The default retry budget (minutes): resets while APNs refuses are no reason to dead-letter.
        var environment = apns.workerEnvironment(redis: redis, [
            "WORKER_ID": "reset", "METRICS_LISTEN": "", "COLLECTOR_MAX_IN_FLIGHT": "400",
        ])
        environment["APNS_ENDPOINT"] = "https://127.0.0.1:\(proxy.port)"
        let worker = try WorkerProcess(environment: environment, logFile: makeTemporaryDirectory("reset") + "/worker.log")
        defer { worker.signal(SIGKILL) }

        try await eventually(timeout: .seconds(60)) { apns.answeredCount >= 200 }
        let resetting = ContinuousClock.now
        proxy.startResetting()
        // Open connections reset while requests flow, then every reconnect reset once it sends requests: for
        // the 20 s of the outage (a scenario's length, not a wait for an event), and 12 resets at least.
        try await eventually(timeout: .seconds(90)) {
            (proxy.resets >= 12 && ContinuousClock.now - resetting >= .seconds(20)) || !worker.process.isRunning
        }
        XCTAssertTrue(worker.process.isRunning, "the worker survives reset connections: \(worker.log.suffix(2000))")
        let healed = ContinuousClock.now
        proxy.heal()

        try await eventually(timeout: .seconds(90)) {
            guard worker.process.isRunning else { return true }
            // Acknowledged, not only answered: a request whose answer a reset cut off is sent again (ambiguous).
            let delivered = Set(apns.answered().filter { $0.status == 200 }.map(\.token))
            guard delivered.count == total else { return false }
            let queued = try await client.length(keys.queue)
            let claimed = try await client.claimedCount(keys.processing(worker: "reset"))
            return queued == 0 && claimed == 0
        }
        XCTAssertTrue(worker.process.isRunning, "alive after the resets: \(worker.log.suffix(2000))")
        printFigure("connection resets: \(proxy.resets) connections reset over \(healed - resetting); everything delivered and acknowledged \(ContinuousClock.now - healed) after the resets stopped")
        let delivered = Set(apns.answered().filter { $0.status == 200 }.map(\.token))
        XCTAssertEqual((0..<total).filter { !delivered.contains(token("a1", $0)) }.count, 0, "everything delivered")
        try await assertEqual(try await client.length(keys.deadLetters), 0)
        worker.signal(SIGTERM)
        let status = await worker.waitForExit(timeout: 30)
        XCTAssertEqual(status, 0, worker.log.suffix(2000).description)
        await apns.stop()
    }
}
