import Foundation
import PushCore
import QueueProtocol
import RedisClient
import TestSupport
import XCTest

/// Issue 17: SIGTERM exits within `shutdown.timeout_s` plus 2 s whatever happens, even with Redis, APNs or both
/// black-holed (packets dropped, connections hanging: a TCP proxy that stops forwarding), and nothing is lost:
/// what was not acknowledged stays claimed for recovery.
final class ShutdownBoundTests: XCTestCase {
    static let timeoutSeconds = 2

    private func stopWithin(blackholing: (redis: Bool, apns: Bool)) async throws {
        let redis = try RedisServer()
        defer { redis.kill() }
        let apns = try await EmulatorStandIn { $0.latencyMillis = 300 }
        let redisProxy = try BlackholeProxy(targetPort: redis.port)
        let apnsProxy = try BlackholeProxy(targetPort: apns.emulator.port)
        let client = RedisConnection(url: redis.url, name: "test-client")
        addTeardownBlock { await client.close() }
        let keys = RedisKeys()
        let total = 400
        try await client.lpush(keys.queue, (0..<total).map { messageJSON(id: "b\($0)", tokens: [token("a1", $0)]) })
        var environment = apns.workerEnvironment(redisURL: "redis://127.0.0.1:\(redisProxy.port)/0", [
            "WORKER_ID": "bounded", "SHUTDOWN_TIMEOUT_S": String(Self.timeoutSeconds), "COLLECTOR_MAX_IN_FLIGHT": "100",
        ])
        environment["APNS_ENDPOINT"] = "https://127.0.0.1:\(apnsProxy.port)"
        let worker = try WorkerProcess(environment: environment, logFile: makeTemporaryDirectory("bounded") + "/worker.log")
        try await eventually(timeout: .seconds(30)) { apns.answered().count >= 20 }
        if blackholing.redis { redisProxy.blackhole() }
        if blackholing.apns { apnsProxy.blackhole() }
        try await Task.sleep(for: .milliseconds(500))  // the worker is now waiting on what went silent

        let stop = ContinuousClock.now
        worker.signal(SIGTERM)
        let status = await worker.waitForExit(timeout: 30)
        let took = ContinuousClock.now - stop
        print("shutdown with redis black-holed: \(blackholing.redis), APNs: \(blackholing.apns): exited in \(took)")
        XCTAssertEqual(status, 0, worker.log.suffix(3000).description)
        XCTAssertLessThan(took, .seconds(Self.timeoutSeconds + 2), "shutdown.timeout_s + 2 s:\n\(worker.log.suffix(3000))")

        // Nothing lost: each message was delivered, is still claimed (for recovery), or is still queued.
        let queued = try await client.strings(keys.queue)
        let claimedValues = (try await client.execute(["HVALS", keys.processing(worker: "bounded")]).array ?? []).compactMap(\.string)
        var accounted = Set(apns.answered().filter { $0.status == 200 }.map(\.token))
        for element in queued + claimedValues {
            for token in (jsonObject(element)["tokens"] as? [String]) ?? [] { accounted.insert(token) }
        }
        XCTAssertEqual((0..<total).filter { !accounted.contains(token("a1", $0)) }, [], "every message delivered, claimed or queued")
        let claimed = claimedValues.count
        if blackholing.redis {
            XCTAssertGreaterThan(claimed, 0, "claims stay for recovery when Redis cannot be reached at exit")
        }
        redisProxy.stop()
        apnsProxy.stop()
        await apns.stop()
    }

    func testRedisBlackholed() async throws { try await stopWithin(blackholing: (redis: true, apns: false)) }
    func testAPNsBlackholed() async throws { try await stopWithin(blackholing: (redis: false, apns: true)) }
    func testRedisAndAPNsBlackholed() async throws { try await stopWithin(blackholing: (redis: true, apns: true)) }
}
