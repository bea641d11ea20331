import Foundation
import PushCore
import QueueProtocol
import RedisClient
import TestSupport
import XCTest

/// Issue 18, docs/operations.md: a broadcast on `push:queue:bulk` never delays a chat push on `push:queue`. The
/// chat push is answered while most of the broadcast still waits (pushed onto the same list, it would wait
/// behind all of it), and the broadcast is delivered in full, nothing twice, nothing dead-lettered.
final class BulkLaneTests: XCTestCase {
    func testAChatPushOvertakesABroadcastAndTheBroadcastStillDrains() async throws {
        let redis = try RedisServer()
        defer { redis.kill() }
        let apns = try await EmulatorStandIn { $0.latencyMillis = 20 }
        let client = RedisConnection(url: redis.url, name: "producer")
        addTeardownBlock { await client.close() }
        let keys = RedisKeys()
        let directory = makeTemporaryDirectory("bulk")
        // A broadcast: 16 system messages of 500 tokens each, far more than the pipeline holds at once.
        let broadcast = (0..<16).map { n in
            messageJSON(id: "broadcast-\(n)", tokens: (0..<500).map { token("b1", n * 500 + $0) }, kind: "system",
                        alert: "release notes \(n)")
        }
        try await client.lpush(keys.bulkQueue, broadcast)
        let worker = try WorkerProcess(environment: apns.workerEnvironment(redis: redis, [
            "WORKER_ID": "bulk-worker", "COLLECTOR_MAX_IN_FLIGHT": "1000", "COLLECTOR_WINDOW_MS": "50",
            // "None twice" must not depend on how fast the emulator (in this process) answers 1,000 streams at once
            // on a loaded machine: a request timed out is sent again.
            "APNS_REQUEST_TIMEOUT_MS": "120000",
        ]), logFile: directory + "/worker.log")
        defer { worker.signal(SIGKILL) }
        try await eventually(timeout: .seconds(30)) { apns.answeredCount >= 1000 }

        let chatToken = token("c1", 1)
        let pushedAt = apns.answeredCount
        try await client.lpush(keys.queue, [messageJSON(id: "chat-1", tokens: [chatToken])])
        try await eventually(timeout: .seconds(30)) { apns.answered().contains { $0.token == chatToken } }
        let answered = apns.answered()
        let chatAt = answered.firstIndex { $0.token == chatToken } ?? answered.count
        let waitingAtPush = 8000 - pushedAt
        printFigure("bulk lane: the chat push was answered after \(chatAt - pushedAt) broadcast answers; \(waitingAtPush) were waiting when it was pushed")
        XCTAssertLessThan(chatAt - pushedAt, waitingAtPush / 2, "the chat push did not wait behind the broadcast")

        try await eventually(timeout: .seconds(300)) {
            let queued = try await client.length(keys.bulkQueue) + client.length(keys.queue)
            let claimed = try await client.claimedCount(keys.processing(worker: "bulk-worker"))
            return queued == 0 && claimed == 0
        }
        var sends: [String: Int] = [:]
        for (token, status) in apns.answered() where status == 200 { sends[token, default: 0] += 1 }
        XCTAssertEqual(sends.count, 8001, "every token delivered")
        XCTAssertEqual(sends.values.filter { $0 > 1 }.count, 0, "none twice")
        try await assertEqual(try await client.length(keys.deadLetters), 0)
        worker.signal(SIGTERM)
        let status = await worker.waitForExit(timeout: 20)
        XCTAssertEqual(status, 0, worker.log.suffix(2000).description)
        await apns.stop()
    }
}
