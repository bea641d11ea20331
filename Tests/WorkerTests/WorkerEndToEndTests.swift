import Foundation
import PushCore
import QueueProtocol
import RedisClient
import TestSupport
import XCTest

/// The `worker` binary against a real redis-server and the APNs emulator (HTTP/2 over TLS).
final class WorkerEndToEndTests: XCTestCase {
    var redis: RedisServer!
    var apns: EmulatorStandIn!
    var client: RedisConnection!
    var directory: String!
    var keyFile: String!
    let keys = RedisKeys()

    override func setUp() async throws {
        redis = try RedisServer(persistent: true)
        apns = try await EmulatorStandIn()
        client = RedisConnection(url: redis.url, name: "test-client")
        directory = makeTemporaryDirectory("worker")
        keyFile = apns.keyFile
    }

    override func tearDown() async throws {
        await client.close()
        await apns.stop()
        redis.kill()
    }

    private func environment(_ extra: [String: String] = [:]) -> [String: String] {
        var env = [
            "REDIS_URL": redis.urlString, "APNS_ENDPOINT": apns.endpoint, "APNS_CA_FILE": apns.caFile,
            "APNS_APPS_0_TOPIC": "com.example.chat", "APNS_APPS_0_TEAM_ID": "DEF123GHIJ",
            "APNS_APPS_0_KEY_ID": "ABC123DEFG", "APNS_APPS_0_KEY_FILE": keyFile!,
            "RETRY_MAX_ATTEMPTS": "2", "RETRY_BASE_DELAY_MS": "10", "RETRY_MAX_DELAY_MS": "50",
            "REDIS_HEARTBEAT_TTL_MS": "1000", "COLLECTOR_WINDOW_MS": "50",
        ]
        env.merge(extra) { $1 }
        return env
    }

    private func startWorker(_ extra: [String: String] = [:], name: String = "worker") throws -> WorkerProcess {
        try WorkerProcess(environment: environment(extra), logFile: "\(directory!)/\(name).log")
    }

    /// True once nothing is queued or claimed by anyone.
    private func drained() async throws -> Bool {
        // Redis may be restarting under a test: an unanswered question means "not yet".
        guard let queued = try? await client.length(keys.queue),
              let claims = try? await client.execute(["KEYS", "push:processing:*"]).array
        else { return false }
        return queued == 0 && claims.isEmpty
    }

    private func waitUntilDrained(timeout: Duration = .seconds(60), _ worker: WorkerProcess? = nil) async throws {
        let end = ContinuousClock.now + timeout
        while ContinuousClock.now < end {
            if try await drained() { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        XCTFail("the queue did not drain; worker log:\n\(worker?.log.suffix(3000) ?? "")")
    }

    private func deliveredTokens() -> [String: Int] {
        var counts: [String: Int] = [:]
        for (token, status) in apns.answered() where status == 200 { counts[token, default: 0] += 1 }
        return counts
    }

    func testMixedTrafficEndsInExactlyOnePlaceEach() async throws {
        try "赌博\nspam\n".write(toFile: "\(directory!)/words.txt", atomically: true, encoding: .utf8)
        let worker = try startWorker(["FILTER_WORDS_FILE": "\(directory!)/words.txt"])
        var messages = (1...20).map { messageJSON(id: "p\($0)", tokens: [token("a1", $0)]) }
        messages.append(messageJSON(id: "gone", tokens: [token("410a", 1), token("a1", 100)]))
        messages.append(messageJSON(id: "badtok", tokens: ["xyz", token("a1", 101)]))
        messages.append("{\"id\": 5")
        messages.append(messageJSON(id: "bad-field", tokens: [token("a1", 102)], extra: ["priority": 3]))
        messages.append(messageJSON(id: "rude", tokens: [token("a1", 103)], alert: "今天 赌·博 吗"))
        messages.append(messageJSON(id: "busy", tokens: [token("5030", 1)]))
        messages.append(messageJSON(id: "topic?", tokens: [token("a1", 104)], topic: "com.unknown.app"))
        for n in 1...3 {  // one group notice to overlapping receivers: merged, token 200 sent once
            messages.append(messageJSON(id: "g\(n)", tokens: [token("a1", 200), token("a1", 200 + n)], kind: "group", uuid: "notice-1"))
        }
        try await client.lpush(keys.queue, messages)
        try await waitUntilDrained(worker)

        let delivered = deliveredTokens()
        for n in 1...20 { XCTAssertEqual(delivered[token("a1", n)], 1, "private message \(n)") }
        XCTAssertEqual(delivered[token("a1", 100)], 1)
        XCTAssertEqual(delivered[token("a1", 101)], 1, "a bad token does not hold back the good one")
        XCTAssertEqual(delivered[token("a1", 200)], 1, "merged messages send a shared token once")
        for n in 201...203 { XCTAssertEqual(delivered[token("a1", n)], 1) }
        XCTAssertNil(delivered[token("a1", 103)], "filtered messages are never sent")
        XCTAssertEqual(apns.answered().filter { $0.token == token("a1", 200) }.count, 1)

        let feedback = try await client.strings(keys.feedback).map(jsonObject)
        XCTAssertEqual(Set(feedback.compactMap { $0["reason"] as? String }), ["Unregistered", "BadDeviceToken"])
        XCTAssertEqual(feedback.first { $0["reason"] as? String == "Unregistered" }?["token"] as? String, token("410a", 1))
        XCTAssertEqual(feedback.first { $0["reason"] as? String == "Unregistered" }?["timestamp"] as? Int, 1_700_000_000_000)
        XCTAssertEqual(feedback.first { $0["reason"] as? String == "BadDeviceToken" }?["message_id"] as? String, "badtok")

        let dead = try await client.strings(keys.deadLetters).map(jsonObject)
        let reasons = Dictionary(uniqueKeysWithValues: dead.map { (($0["message"] as? [String: Any])?["id"] as? String ?? "raw", $0) })
        XCTAssertEqual(reasons["raw"]?["raw"] as? String, "{\"id\": 5")
        XCTAssertEqual(reasons["raw"]?["reason"] as? String, "Malformed: not JSON (unexpected end of input at byte 8)")
        XCTAssertEqual(reasons["bad-field"]?["reason"] as? String, "Malformed: priority must be 10, 5 or 1")
        XCTAssertEqual(reasons["busy"]?["reason"] as? String, "ServiceUnavailable")
        XCTAssertEqual(reasons["busy"]?["status"] as? Int, 503)
        XCTAssertEqual(reasons["busy"]?["attempts"] as? Int, 2)
        XCTAssertEqual((reasons["busy"]?["message"] as? [String: Any])?["tokens"] as? [String], [token("5030", 1)])
        XCTAssertEqual(reasons["topic?"]?["reason"] as? String, "TopicNotConfigured: no app in apns.apps has topic com.unknown.app")
        XCTAssertEqual(dead.count, 4)

        let filtered = try await client.strings(keys.filtered).map(jsonObject)
        XCTAssertEqual(filtered.count, 1)
        XCTAssertEqual(filtered.first?["message_id"] as? String, "rude")
        XCTAssertEqual(filtered.first?["matched"] as? String, "赌博")

        worker.signal(SIGTERM)
        let status = await worker.waitForExit(timeout: 15)
        XCTAssertEqual(status, 0, worker.log)
        let heartbeats = try await client.execute(["KEYS", "push:worker:*"]).array ?? []
        XCTAssertTrue(heartbeats.isEmpty, "a stopped worker removes its liveness key")
    }

    func testAWorkerKilledWithSIGKILLLosesNothing() async throws {
        let total = 5000
        try await client.lpush(keys.queue, (0..<total).map { messageJSON(id: "k\($0)", tokens: [token("a1", $0)]) })
        let first = try startWorker(["COLLECTOR_MAX_IN_FLIGHT": "300", "WORKER_ID": "doomed"], name: "doomed")
        try await eventually(timeout: .seconds(30)) {
            try await self.client.claimedCount(self.keys.processing(worker: "doomed")) > 0 && !self.apns.answered().isEmpty
        }
        first.signal(SIGKILL)
        _ = await first.waitForExit(timeout: 5)
        let stranded = try await client.claimedCount(keys.processing(worker: "doomed"))
        XCTAssertGreaterThan(stranded, 0, "the killed worker held claims (else this test proves nothing)")
        // The rescuer opens thousands of streams at once: on a loaded machine the emulator (in this process) may
        // answer some after the default 10 s timeout, which would spend both attempts and dead-letter them.
        let second = try startWorker(["WORKER_ID": "rescuer", "APNS_REQUEST_TIMEOUT_MS": "120000"], name: "rescuer")
        try await waitUntilDrained(timeout: .seconds(180), second)
        let delivered = deliveredTokens()
        let missing = (0..<total).filter { delivered[token("a1", $0)] == nil }
        XCTAssertEqual(missing, [], "every message reached APNs at least once")
        let dead = try await client.strings(keys.deadLetters)
        XCTAssertEqual(dead.count, 0, "dead letters, e.g. \(dead.prefix(2))")
        XCTAssertTrue(second.log.contains("returned a dead worker's claims"), second.log)
        second.signal(SIGTERM)
        let status = await second.waitForExit(timeout: 15)
        XCTAssertEqual(status, 0)
    }

    func testGracefulShutdownFinishesOrReturnsEverything() async throws {
        // Slow retries keep work in flight when SIGTERM arrives; the deadline is 1 s.
        let total = 400
        var messages = (0..<total).map { messageJSON(id: "s\($0)", tokens: [token("a1", $0)]) }
        messages += (0..<50).map { messageJSON(id: "r\($0)", tokens: [token("5030", $0)]) }
        try await client.lpush(keys.queue, messages)
        let worker = try startWorker(["RETRY_MAX_ATTEMPTS": "5", "RETRY_BASE_DELAY_MS": "3000", "RETRY_MAX_DELAY_MS": "3000",
                                      "SHUTDOWN_TIMEOUT_S": "1", "WORKER_ID": "graceful"])
        try await eventually(timeout: .seconds(30)) { self.apns.answered().contains { $0.status == 503 } }
        worker.signal(SIGTERM)
        let status = await worker.waitForExit(timeout: 20)
        XCTAssertEqual(status, 0, worker.log)
        let processing = try await client.claimedCount(keys.processing(worker: "graceful"))
        XCTAssertEqual(processing, 0, "nothing stays claimed after a graceful stop")
        let alive = try await client.execute(["EXISTS", keys.heartbeat(worker: "graceful")]).integer
        XCTAssertEqual(alive, 0)
        let queued = try await client.strings(keys.queue).map(jsonObject)
        let dead = try await client.length(keys.deadLetters)
        let delivered = Set(deliveredTokens().keys)
        let returnedIDs = Set(queued.compactMap { $0["id"] as? String })
        XCTAssertTrue((0..<50).allSatisfy { returnedIDs.contains("r\($0)") }, "unfinished retries go back to the queue")
        XCTAssertEqual(dead, 0)
        for n in 0..<total where !returnedIDs.contains("s\(n)") {
            XCTAssertTrue(delivered.contains(token("a1", n)), "s\(n) is neither delivered nor returned")
        }
    }

    func testASecondSignalExitsAtOnceAndKeepsTheClaims() async throws {
        try await client.lpush(keys.queue, (0..<20).map { messageJSON(id: "r\($0)", tokens: [token("5030", $0)]) })
        let worker = try startWorker(["RETRY_MAX_ATTEMPTS": "5", "RETRY_BASE_DELAY_MS": "5000", "RETRY_MAX_DELAY_MS": "5000",
                                      "SHUTDOWN_TIMEOUT_S": "60", "WORKER_ID": "impatient"])
        try await eventually(timeout: .seconds(30)) { self.apns.answeredCount >= 20 }
        worker.signal(SIGTERM)
        try await eventually { worker.log.contains("shutting down") }
        worker.signal(SIGTERM)
        let status = await worker.waitForExit(timeout: 5)
        XCTAssertEqual(status, 130, "the second signal does not wait for the 60 s deadline")
        let claimed = try await client.claimedCount(keys.processing(worker: "impatient"))
        XCTAssertEqual(claimed, 20, "what was claimed stays claimed, for a live worker to return")
    }

    func testARedisRestartLosesNothing() async throws {
        let total = 1500
        try await client.lpush(keys.queue, (0..<total).map { messageJSON(id: "x\($0)", tokens: [token("a1", $0)]) })
        let worker = try startWorker(["COLLECTOR_MAX_IN_FLIGHT": "200"])
        try await eventually(timeout: .seconds(30)) { !self.apns.answered().isEmpty }
        redis.kill()
        try await Task.sleep(for: .seconds(1))
        try redis.start()
        try await waitUntilDrained(timeout: .seconds(90), worker)
        let delivered = deliveredTokens()
        XCTAssertEqual((0..<total).filter { delivered[token("a1", $0)] == nil }, [], "every message reached APNs")
        XCTAssertTrue(worker.log.contains("Redis is back") || worker.log.contains("acknowledgement failed"), worker.log)
        XCTAssertFalse(worker.log.contains("no longer claimed"), "a reconnect must not take claims twice:\n\(worker.log)")
        XCTAssertEqual(delivered.filter { $0.value > 1 }.map(\.key), [], "nothing sent twice because of the reconnect")
        worker.signal(SIGTERM)
        let status = await worker.waitForExit(timeout: 15)
        XCTAssertEqual(status, 0)
    }

    func testStartupErrorsAreClearAndFatal() async throws {
        let missingKey = try startWorker(["APNS_APPS_0_KEY_FILE": "/nonexistent/AuthKey.p8"], name: "nokey")
        let status = await missingKey.waitForExit(timeout: 15)
        XCTAssertEqual(status, 2)
        XCTAssertTrue(missingKey.log.contains("APNs key /nonexistent/AuthKey.p8: file not found or not readable"), missingKey.log)

        try "redis:\n  ulr: x\n".write(toFile: "\(directory!)/bad.yaml", atomically: true, encoding: .utf8)
        let badConfig = try WorkerProcess(environment: environment(), arguments: ["run", "--config", "\(directory!)/bad.yaml"],
                                          logFile: "\(directory!)/badconfig.log")
        let configStatus = await badConfig.waitForExit(timeout: 15)
        XCTAssertEqual(configStatus, 2)
        XCTAssertTrue(badConfig.log.contains("unknown key 'redis.ulr'"), badConfig.log)
    }
}
