import Foundation
import PushCore
import QueueProtocol
import RedisClient
import TestSupport
import XCTest

/// Two workers configured through Sentinel (one primary, one replica, three sentinels); the primary is
/// killed with SIGKILL mid-run. The workers follow the promoted replica without a restart, every message
/// is delivered, nothing is dead-lettered, and duplicates (what the primary had not replicated) are printed.
final class SentinelFailoverWorkerTests: XCTestCase {
    func testWorkersFollowTheSentinelsThroughAFailover() async throws {
        let servers = try await RedisSentinelServers()
        addTeardownBlock { await servers.stop() }
        let apns = try await EmulatorStandIn { $0.latencyMillis = 40 }
        let keys = RedisKeys()
        let producer = SentinelConnection(url: RedisURL(host: "127.0.0.1", port: 1), sentinel: servers.settings, name: "producer")
        addTeardownBlock { await producer.close() }
        let total = 3000
        for chunk in stride(from: 0, to: total, by: 500) {
            try await producer.execute(["LPUSH", keys.queue] + (chunk..<(chunk + 500)).map { n in
                messageJSON(id: "s\(n)", tokens: [token("a5", n)])
            })
        }
        try await assertEqual(try await producer.execute(["WAIT", "1", "5000"]).integer, 1)
        let directory = makeTemporaryDirectory("sentinel-failover")
        let workers = try (0..<2).map { n in
            // Only the password, database and TLS of redis.url are used with Sentinel.
            try WorkerProcess(environment: apns.workerEnvironment(redisURL: "redis://127.0.0.1:1/0", [
                "REDIS_SENTINEL_MASTER": servers.master,
                "REDIS_SENTINEL_NODES": servers.sentinelPorts.map { "127.0.0.1:\($0)" }.joined(separator: ","),
                "WORKER_ID": "sw\(n)", "COLLECTOR_MAX_IN_FLIGHT": "20", "COLLECTOR_WINDOW_MS": "10",
                // Longer than the failover (down-after 1 s plus the election), so no claim is recovered from a live worker.
                "REDIS_HEARTBEAT_TTL_MS": "15000",
            ]), logFile: "\(directory)/sw\(n).log")
        }
        try await eventually(timeout: .seconds(30)) { apns.answeredCount >= 300 }
        let answeredAtKill = apns.answeredCount
        servers.primary.kill()
        try await eventually(timeout: .seconds(30)) { await servers.namedPrimary() == "127.0.0.1:\(servers.replica.port)" }
        try await eventually(timeout: .seconds(120)) {
            // The test's own connection lives through the failover it caused: its first command after the kill
            // meets the dead primary's closed connection ("not yet"), and the next asks the sentinels again.
            do {
                let queued = try await producer.execute(["LLEN", keys.queue]).integer ?? -1
                var held = 0
                for n in 0..<2 { held += Int(try await producer.execute(["HLEN", keys.processing(worker: "sw\(n)")]).integer ?? -1) }
                return queued == 0 && held == 0
            } catch RedisError.connection {
                return false
            }
        }
        let delivered = acceptances(by: apns)
        let expected = (0..<total).map { token("a5", $0) }
        XCTAssertLessThan(answeredAtKill, total, "the primary died while the workers were sending")
        XCTAssertEqual(expected.filter { delivered[$0] == nil }, [], "every message delivered")
        let duplicates = expected.filter { (delivered[$0] ?? 0) > 1 }
        printFigure("sentinel failover (workers): \(answeredAtKill) of \(total) answered at the kill; \(duplicates.count) delivered twice")
        try await assertEqual(try await producer.execute(["LLEN", keys.deadLetters]).integer, 0)
        for worker in workers { worker.signal(SIGTERM) }
        for worker in workers {
            let status = await worker.waitForExit(timeout: 20)
            XCTAssertEqual(status, 0, worker.log.suffix(2000).description)
        }
        await apns.stop()
    }
}
