import Foundation
import PushCore
import QueueProtocol
import RedisClient
import TestSupport
import XCTest

/// A Redis outage longer than the heartbeat TTL is not every worker's death: when Redis answers again every
/// liveness key has lapsed, and a worker that recovered its peers then would re-send what they had sent but not
/// yet acknowledged. A worker back from an outage renews its own key and recovers others only after reaching
/// Redis for a whole TTL, by when every live peer has renewed too.
final class RedisOutageTests: XCTestCase {
    func testAnOutageLongerThanTheTTLRecoversNobodyAndSendsNothingTwice() async throws {
        let redis = try RedisServer(persistent: true)
        defer { redis.kill() }
        let apns = try await EmulatorStandIn { $0.latencyMillis = 200 }
        let client = RedisConnection(url: redis.url, name: "test-client")
        addTeardownBlock { await client.close() }
        let keys = RedisKeys()
        let count = 3000
        try await client.lpush(keys.queue, (0..<count).map { messageJSON(id: "o\($0)", tokens: [token("d1", $0)]) })
        let workers = try (0..<2).map { n in
            try WorkerProcess(environment: apns.workerEnvironment(redis: redis, [
                "WORKER_ID": "outage-\(n)", "REDIS_HEARTBEAT_TTL_MS": "1000", "COLLECTOR_MAX_IN_FLIGHT": "400",
                // "Nothing twice" must be the recovery's doing, not a request the emulator (in this process, on a
                // loaded machine) answered after the default 10 s timeout.
                "APNS_REQUEST_TIMEOUT_MS": "120000",
            ]), logFile: makeTemporaryDirectory("outage-\(n)") + "/worker.log")
        }
        defer { workers.forEach { $0.signal(SIGKILL) } }
        try await eventually(timeout: .seconds(60)) { apns.answeredCount(status: 200) >= 300 }
        // Redis down for three TTLs and back from its AOF (a restart): every liveness key has lapsed when it
        // answers again, while both workers hold requests answered and not yet acknowledged.
        redis.kill()
        try await Task.sleep(for: .seconds(3))
        try redis.start()
        try await eventually(timeout: .seconds(120)) {
            let delivered = Set(apns.answered().filter { $0.status == 200 }.map(\.token)).count
            return delivered == count
        }
        try await eventually(timeout: .seconds(60)) {
            // The test's own connection was broken by the restart too: a failed read is "not yet".
            guard let queued = try? await client.length(keys.queue),
                  let claimed0 = try? await client.claimedCount(keys.processing(worker: "outage-0")),
                  let claimed1 = try? await client.claimedCount(keys.processing(worker: "outage-1")) else { return false }
            return queued == 0 && claimed0 == 0 && claimed1 == 0
        }
        for worker in workers {
            XCTAssertFalse(worker.log.contains("returned a dead worker's claims"), "a live peer was taken for dead: \(worker.log.suffix(3000))")
        }
        let sends = Dictionary(grouping: apns.answered().filter { $0.status == 200 }, by: \.token)
        XCTAssertEqual(sends.filter { $0.value.count > 1 }.count, 0, "nothing sent twice")
        for worker in workers { worker.signal(SIGTERM) }
        for worker in workers { _ = await worker.waitForExit(timeout: 30) }
        await apns.stop()
    }
}
