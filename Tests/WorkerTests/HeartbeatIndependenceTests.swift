import Foundation
import PushCore
import QueueProtocol
import RedisClient
import TestSupport
import XCTest

/// The heartbeat never waits for the acknowledging side. After the ownership lease lapses, the worker asks its
/// Acknowledger which claims are still its own; an Acknowledger stuck retrying a write must not stop the beats,
/// or the liveness key expires and peers take every claim of a worker that is alive.
final class HeartbeatIndependenceTests: XCTestCase {
    let keys = RedisKeys()
    static let ttlMillis = 10_000

    func testBeatsGoOnWhileTheAcknowledgerRetriesAfterALapse() async throws {
        // The worker's ACL user may do everything but HDEL: every acknowledgement fails (NOPERM) and the
        // Acknowledger retries it for ever, while claims and beats succeed. The peer is the default user.
        let redis = try RedisServer(arguments: ["--user", "stuck", "on", ">stuck-pw", "~*", "&*", "+@all", "-hdel"])
        defer { redis.kill() }
        let apns = try await EmulatorStandIn()
        let client = RedisConnection(url: redis.url, name: "test-client")
        addTeardownBlock { await client.close() }
        let directory = makeTemporaryDirectory("heartbeat")
        try await client.lpush(keys.queue, (0..<100).map { messageJSON(id: "h\($0)", tokens: [token("a1", $0)]) })
        func worker(_ id: String, url: String) throws -> WorkerProcess {
            try WorkerProcess(environment: apns.workerEnvironment(redisURL: url, [
                "WORKER_ID": id, "REDIS_HEARTBEAT_TTL_MS": String(Self.ttlMillis), "COLLECTOR_MAX_IN_FLIGHT": "20",
                "COLLECTOR_WINDOW_MS": "10", "SHUTDOWN_TIMEOUT_S": "2",
            ]), logFile: "\(directory)/\(id).log")
        }
        let stuck = try worker("stuck", url: "redis://stuck:stuck-pw@127.0.0.1:\(redis.port)/0")
        let processing = keys.processing(worker: "stuck")
        try await eventually(timeout: .seconds(30)) { stuck.log.contains("acknowledgement failed; retrying") }
        // The peer sends the rest; what the stuck worker holds then stays the same unless a peer takes it.
        let peer = try worker("peer", url: redis.urlString)
        try await eventually(timeout: .seconds(30)) {
            let queued = try await client.length(self.keys.queue)
            let peerHeld = try await client.claimedCount(self.keys.processing(worker: "peer"))
            return queued == 0 && peerHeld == 0
        }
        let held = try await client.claimedCount(processing)
        XCTAssertGreaterThan(held, 0)

        // The lease lapses: the worker is stopped between two beats (a tenth of the TTL after one reached Redis, so
        // it has had the reply, and the next is due at a third) until 87% of the TTL has passed since that beat
        // (its lease ends at 80%, counted from when the beat was sent). It beats again at once on waking, while
        // its key is still there.
        let heartbeat = keys.heartbeat(worker: "stuck")
        var beatArrived: ContinuousClock.Instant?
        let giveUp = ContinuousClock.now + .seconds(20)
        while beatArrived == nil && ContinuousClock.now < giveUp {
            let remaining = Int(try await client.execute(["PTTL", heartbeat]).integer ?? -1)
            // Counted from when the reply came, so the beat reached Redis no later than this.
            if remaining >= Self.ttlMillis - 100 { beatArrived = ContinuousClock.now - .milliseconds(Self.ttlMillis - remaining) }
        }
        let arrived = try XCTUnwrap(beatArrived, "a beat was seen reaching Redis")
        try await Task.sleep(until: arrived + .milliseconds(Self.ttlMillis / 10))
        stuck.signal(SIGSTOP)
        try await Task.sleep(until: arrived + .milliseconds(Self.ttlMillis * 87 / 100))
        stuck.signal(SIGCONT)

        // From now on the beats go on (every third of the TTL) though the Acknowledger cannot answer: the key is
        // renewed at once and again and again, and never missing.
        var renewals = 0
        var last = Int(try await client.execute(["PTTL", heartbeat]).integer ?? -2)
        var lowest = last
        let end = ContinuousClock.now + .seconds(60)
        while renewals < 5 && lowest >= 0 && ContinuousClock.now < end {
            try await Task.sleep(for: .milliseconds(20))
            let now = Int(try await client.execute(["PTTL", heartbeat]).integer ?? -2)
            if now > last + 100 { renewals += 1 }
            lowest = min(lowest, now)
            last = now
        }
        XCTAssertTrue(stuck.log.contains("ownership lease lapsed"), "the lease lapsed\n\(stuck.log.suffix(3000))")
        XCTAssertGreaterThanOrEqual(lowest, 0, "the liveness key expired: the heartbeat stopped\n\(stuck.log.suffix(3000))")
        XCTAssertGreaterThanOrEqual(renewals, 5, "the heartbeat kept beating after the lapse\n\(stuck.log.suffix(3000))")
        try await assertEqual(try await client.claimedCount(processing), held, "no peer took the claims of a live worker")
        XCTAssertFalse(peer.log.contains("returned a dead worker's claims"), peer.log.suffix(3000).description)

        for process in [stuck, peer] { process.signal(SIGTERM) }
        for process in [stuck, peer] {
            let status = await process.waitForExit(timeout: 20)
            XCTAssertEqual(status, 0, process.log.suffix(3000).description)
        }
        await apns.stop()
    }

    /// The metrics sampler reads the queue lengths on a connection of its own, not on the beats': a read that
    /// waits (a slow or silent Redis answers it within the socket timeout) never delays a beat. Redis's MONITOR
    /// names the client of every command.
    func testTheMetricsSamplerDoesNotShareTheHeartbeatsConnection() async throws {
        guard let cli = which("redis-cli") else { throw XCTSkip("redis-cli is not installed") }
        let redis = try RedisServer()
        defer { redis.kill() }
        let apns = try await EmulatorStandIn()
        let directory = makeTemporaryDirectory("sampler")
        let monitorFile = "\(directory)/monitor.txt"
        FileManager.default.createFile(atPath: monitorFile, contents: nil)
        let monitor = Process()
        monitor.executableURL = URL(fileURLWithPath: cli)
        monitor.arguments = ["-p", String(redis.port), "monitor"]
        monitor.standardOutput = FileHandle(forWritingAtPath: monitorFile)
        try monitor.run()
        defer { monitor.terminate() }
        let worker = try WorkerProcess(environment: apns.workerEnvironment(redis: redis, [
            "WORKER_ID": "sampled", "REDIS_HEARTBEAT_TTL_MS": "1000",
        ]), logFile: "\(directory)/worker.log")
        /// The client (address and port) of each command that starts with `command`, once per command; commands
        /// a script runs (client "lua", like the claim script's LLEN of the queue) are left out.
        @Sendable func clients(sending command: String) -> [String] {
            let lines = ((try? String(contentsOfFile: monitorFile, encoding: .utf8)) ?? "").split(separator: "\n")
            return lines.compactMap { line -> String? in
                // 1795643559.782221 [0 127.0.0.1:44038] "SET" "push:worker:sampled" ...
                guard let open = line.firstIndex(of: "["), let close = line.firstIndex(of: "]"), open < close,
                      line[line.index(after: close)...].hasPrefix(" " + command) else { return nil }
                let client = line[line.index(after: open)..<close].split(separator: " ").last.map(String.init)
                return client == "lua" ? nil : client
            }
        }
        let beat = "\"SET\" \"push:worker:sampled\""
        let sample = "\"LLEN\" \"push:queue\""
        // A few beats and samples each (samples every two seconds, beats every third of a second).
        try await eventually(timeout: .seconds(30)) {
            clients(sending: sample).count >= 3 && clients(sending: beat).count >= 3
        }
        let beating = Set(clients(sending: beat))
        let sampling = Set(clients(sending: sample))
        XCTAssertEqual(beating.count, 1, "one connection beats: \(beating)")
        XCTAssertFalse(sampling.isEmpty)
        XCTAssertTrue(beating.isDisjoint(with: sampling), "the sampler reads on the heartbeat's connection: \(beating)")
        worker.signal(SIGTERM)
        let status = await worker.waitForExit(timeout: 20)
        XCTAssertEqual(status, 0, worker.log.suffix(3000).description)
        await apns.stop()
    }
}
