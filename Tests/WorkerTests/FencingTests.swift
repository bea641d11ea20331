import Foundation
import PushCore
import QueueProtocol
import RedisClient
import TestSupport
import XCTest

/// Ownership fencing (docs/queue-protocol.md): a worker paused or cut off from Redis for longer than its heartbeat TTL
/// has had its claims returned to the queue and sent by a peer. When it comes back it must send none of them:
/// it holds what it claimed once its lease lapses, and drops what recovery took without sending it.
///
/// Each worker talks to an APNs emulator of its own, so the test knows who sent what and when. The paused
/// worker's APNs is slow and allows few streams, so most of its claims wait in its transport at the pause:
/// exactly what an unfenced worker would send after it.
final class FencingTests: XCTestCase {
    var redis: RedisServer!
    var client: RedisConnection!
    var directory: String!
    let keys = RedisKeys()
    static let total = 600
    static let maxInFlight = 200
    static let ttlMillis = 1500

    override func setUp() async throws {
        redis = try RedisServer()
        client = RedisConnection(url: redis.url, name: "test-client")
        directory = makeTemporaryDirectory("fencing")
    }

    override func tearDown() async throws {
        await client.close()
        redis.kill()
    }

    /// The fenced worker's APNs: 200 ms per answer, 10 streams on its one connection.
    private func slowAPNs() async throws -> EmulatorStandIn {
        try await EmulatorStandIn {
            $0.latencyMillis = 200
            $0.initialMaxConcurrentStreams = 10
            $0.maxConcurrentStreams = 10
        }
    }

    private func worker(_ id: String, apns: EmulatorStandIn, redisURL: String) throws -> WorkerProcess {
        try WorkerProcess(environment: apns.workerEnvironment(redisURL: redisURL, [
            "WORKER_ID": id, "REDIS_HEARTBEAT_TTL_MS": String(Self.ttlMillis), "COLLECTOR_WINDOW_MS": "20",
            "COLLECTOR_MAX_IN_FLIGHT": String(Self.maxInFlight), "APNS_CONNECTIONS": "1", "APNS_MAX_CONNECTIONS": "1",
            "APNS_TRANSPORT_THREADS": "1", "LOG_LEVEL": "info",
        ]), logFile: "\(directory!)/\(id).log")
    }

    private func enqueue() async throws {
        try await client.lpush(keys.queue, (0..<Self.total).map { messageJSON(id: "f\($0)", tokens: [token("a1", $0)]) })
    }

    /// The queue is empty and the fenced worker holds nothing: its peer took over and sent everything.
    private func takenOver(_ fenced: String, peer: WorkerProcess) async throws {
        try await eventually(timeout: .seconds(60)) {
            let queued = try await self.client.length(self.keys.queue)
            let held = try await self.client.claimedCount(self.keys.processing(worker: fenced))
            let peerHeld = try await self.client.claimedCount(self.keys.processing(worker: "peer"))
            return queued == 0 && held == 0 && peerHeld == 0
        }
        XCTAssertTrue(peer.log.contains("returned a dead worker's claims"), peer.log.suffix(2000).description)
    }

    private func accepted(_ apns: EmulatorStandIn, from start: Int = 0) -> [String] {
        apns.answered().dropFirst(start).filter { $0.status == 200 }.map(\.token)
    }

    /// After the fenced worker is back: it confirmed its claims, dropped those taken over, and sent none of
    /// them; everything was delivered; the duplicates are only what it had sent before the lapse.
    private func assertFenced(_ fenced: WorkerProcess, slow: EmulatorStandIn, fast: EmulatorStandIn, sentBefore: Int,
                              what: String) async throws {
        try await eventually(timeout: .seconds(30)) { fenced.log.contains("dropped claims another worker took over") }
        try await Task.sleep(for: .seconds(1))  // anything an unfenced worker would send goes out in this second
        let peerSent = Set(accepted(fast))
        let sentAfter = accepted(slow, from: sentBefore)
        let resent = sentAfter.filter(peerSent.contains)
        // On a failure, what the fenced worker said about its lease tells which path sent them.
        let leaseLines = fenced.log.split(separator: "\n").filter { $0.contains("lease") || $0.contains("ownership") || $0.contains("took over") }
        XCTAssertEqual(resent, [], "sent by the fenced worker after \(what) although its peer had taken them over; its log: \(leaseLines.joined(separator: "\n"))")
        let duplicates = Set(accepted(slow)).intersection(peerSent).count
        printFigure("fencing (\(what)): \(sentBefore) requests answered before, \(sentAfter.count) sent after, \(duplicates) tokens sent by both (on the wire or unacknowledged at the lapse)")
        XCTAssertLessThanOrEqual(duplicates, Self.maxInFlight, "at most what was in flight at the lapse")
        let delivered = peerSent.union(accepted(slow))
        XCTAssertEqual((0..<Self.total).filter { !delivered.contains(token("a1", $0)) }, [], "everything delivered")
        let dead = try await client.strings(keys.deadLetters)
        XCTAssertEqual(dead, [])
        let line = fenced.log.split(separator: "\n").first { $0.contains("dropped claims another worker took over") } ?? ""
        XCTAssertTrue(line.contains("messages="), String(line))
    }

    func testAWorkerPausedLongerThanItsTTLSendsNothingItsPeerTookOver() async throws {
        let slow = try await slowAPNs()
        let fast = try await EmulatorStandIn()
        try await enqueue()
        let paused = try worker("paused", apns: slow, redisURL: redis.urlString)
        try await eventually(timeout: .seconds(30)) { self.accepted(slow).count >= 20 }
        paused.signal(SIGSTOP)
        // What was on the wire reaches the emulator, which runs on: wait until its count stops moving (the same for
        // three looks 200 ms apart; a fixed 500 ms was too short for a starved emulator on a loaded machine).
        var (previous, steady) = (-1, 0)
        try await eventually(timeout: .seconds(30)) {
            let now = slow.answeredCount
            steady = now == previous ? steady + 1 : 0
            previous = now
            if steady >= 3 { return true }
            try await Task.sleep(for: .milliseconds(200))
            return false
        }
        let sentBefore = slow.answeredCount
        let held = try await client.claimedCount(keys.processing(worker: "paused"))
        XCTAssertGreaterThan(held, 100, "most of its claims wait in its transport (else this test proves little)")

        let peer = try worker("peer", apns: fast, redisURL: redis.urlString)
        try await takenOver("paused", peer: peer)
        XCTAssertEqual(slow.answeredCount, sentBefore, "a stopped process sends nothing")
        paused.signal(SIGCONT)
        try await assertFenced(paused, slow: slow, fast: fast, sentBefore: sentBefore, what: "SIGSTOP")

        for process in [paused, peer] { process.signal(SIGTERM) }
        for process in [paused, peer] {
            let status = await process.waitForExit(timeout: 20)
            XCTAssertEqual(status, 0, process.log.suffix(3000).description)
        }
        await slow.stop()
        await fast.stop()
    }

    func testAWorkerCutOffFromRedisSendsNothingItsPeerTookOver() async throws {
        let slow = try await slowAPNs()
        let fast = try await EmulatorStandIn()
        let proxy = try BlackholeProxy(targetPort: redis.port)
        try await enqueue()
        let cut = try worker("cut", apns: slow, redisURL: "redis://127.0.0.1:\(proxy.port)/0")
        try await eventually(timeout: .seconds(30)) { self.accepted(slow).count >= 20 }
        proxy.blackhole()
        // Its lease lapses at most 80% of the TTL after the last beat it sent; what it sent until then is
        // answered 200 ms later. From then on it must send nothing at all.
        try await Task.sleep(for: .milliseconds(Self.ttlMillis * 8 / 10 + 200 + 600))
        let sentBefore = slow.answeredCount
        let peer = try worker("peer", apns: fast, redisURL: redis.urlString)
        try await takenOver("cut", peer: peer)
        XCTAssertEqual(slow.answeredCount, sentBefore, "nothing is sent while the lease has lapsed")
        proxy.heal()
        try await assertFenced(cut, slow: slow, fast: fast, sentBefore: sentBefore, what: "a partition from Redis")

        for process in [cut, peer] { process.signal(SIGTERM) }
        for process in [cut, peer] {
            let status = await process.waitForExit(timeout: 20)
            XCTAssertEqual(status, 0, process.log.suffix(3000).description)
        }
        proxy.stop()
        await slow.stop()
        await fast.stop()
    }
}
