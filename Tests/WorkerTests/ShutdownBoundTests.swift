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

    /// What goes wrong with Redis and APNs just before SIGTERM.
    struct Faults {
        /// Packets dropped: a proxy stops forwarding (connections hang, new ones are never answered).
        var redisBlackholed = false
        /// The server process stopped (SIGSTOP): the kernel still accepts connections and takes writes, nothing answers.
        var redisStopped = false
        var apnsBlackholed = false
        /// Every answer takes longer than the shutdown deadline.
        var apnsSlow = false
        /// `collector.max_in_flight`: thousands make thousands of results reach the acknowledger after the
        /// deadline, in many batches (each one waited for Redis once: 1.5 s past the bound with 4,000).
        var inFlight = 100
    }

    private func stopWithin(_ faults: Faults) async throws {
        let redis = try RedisServer()
        defer { redis.kill() }
        let apns = try await EmulatorStandIn { $0.latencyMillis = faults.apnsSlow ? 60_000 : 300 }
        let redisProxy = try BlackholeProxy(targetPort: redis.port)
        let apnsProxy = try BlackholeProxy(targetPort: apns.emulator.port)
        let client = RedisConnection(url: redis.url, name: "test-client")
        addTeardownBlock { await client.close() }
        let keys = RedisKeys()
        let total = 4 * faults.inFlight
        try await client.lpush(keys.queue, (0..<total).map { messageJSON(id: "b\($0)", tokens: [token("a1", $0)]) })
        var environment = apns.workerEnvironment(redisURL: "redis://127.0.0.1:\(redisProxy.port)/0", [
            "WORKER_ID": "bounded", "SHUTDOWN_TIMEOUT_S": String(Self.timeoutSeconds), "COLLECTOR_MAX_IN_FLIGHT": String(faults.inFlight),
        ])
        environment["APNS_ENDPOINT"] = "https://127.0.0.1:\(apnsProxy.port)"
        let worker = try WorkerProcess(environment: environment, logFile: makeTemporaryDirectory("bounded") + "/worker.log")
        if faults.apnsSlow {
            // Nothing is answered: wait until the worker has claimed and a request is on the wire.
            try await eventually(timeout: .seconds(30)) {
                let claimed = try await client.claimedCount(keys.processing(worker: "bounded"))
                return claimed > 0 && apns.emulator.stats.peakConcurrentStreams >= 1
            }
        } else {
            try await eventually(timeout: .seconds(30)) { apns.answeredCount >= 20 }
        }
        if faults.redisBlackholed { redisProxy.blackhole() }
        if faults.redisStopped { redis.signal(SIGSTOP) }
        if faults.apnsBlackholed { apnsProxy.blackhole() }
        try await Task.sleep(for: .milliseconds(500))  // the worker is now waiting on what went silent

        let stop = ContinuousClock.now
        worker.signal(SIGTERM)
        let status = await worker.waitForExit(timeout: 30)
        let took = ContinuousClock.now - stop
        printFigure("shutdown with \(faults): exited in \(took)")
        XCTAssertEqual(status, 0, worker.log.suffix(3000).description)
        XCTAssertLessThan(took, .seconds(Self.timeoutSeconds + 2), "shutdown.timeout_s + 2 s:\n\(worker.log.suffix(3000))")
        if faults.redisStopped { redis.signal(SIGCONT) }

        // Nothing lost: each message was delivered, is still claimed (for recovery), or is still queued.
        let queued = try await client.strings(keys.queue)
        let claimedValues = (try await client.execute(["HVALS", keys.processing(worker: "bounded")]).array ?? []).compactMap(\.string)
        var accounted = Set(apns.answered().filter { $0.status == 200 }.map(\.token))
        for element in queued + claimedValues {
            for token in (jsonObject(element)["tokens"] as? [String]) ?? [] { accounted.insert(token) }
        }
        XCTAssertEqual((0..<total).filter { !accounted.contains(token("a1", $0)) }, [], "every message delivered, claimed or queued")
        let claimed = claimedValues.count
        // (A stopped Redis takes the worker's last writes into its socket buffers and runs them once resumed.)
        if faults.redisBlackholed {
            XCTAssertGreaterThan(claimed, 0, "claims stay for recovery when Redis cannot be reached at exit")
        }
        redisProxy.stop()
        apnsProxy.stop()
        await apns.stop()
    }

    func testRedisBlackholed() async throws { try await stopWithin(Faults(redisBlackholed: true)) }
    func testAPNsBlackholed() async throws { try await stopWithin(Faults(apnsBlackholed: true)) }
    func testRedisAndAPNsBlackholed() async throws { try await stopWithin(Faults(redisBlackholed: true, apnsBlackholed: true)) }
    /// Issue 32: a stopped Redis (SIGSTOP) is not a black hole: connections are accepted and writes taken.
    func testRedisStopped() async throws { try await stopWithin(Faults(redisStopped: true, inFlight: 4000)) }
    func testAPNsSlow() async throws { try await stopWithin(Faults(apnsSlow: true)) }
    func testRedisStoppedAndAPNsSlow() async throws { try await stopWithin(Faults(redisStopped: true, apnsSlow: true, inFlight: 4000)) }
}
