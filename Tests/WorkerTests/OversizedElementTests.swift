import Foundation
import PushCore
import QueueProtocol
import RedisClient
import TestSupport
import XCTest

/// One LPUSH of a 200 MB element never enters a worker's memory: the claim script dead-letters it inside Redis
/// (its first KB kept), and an idle worker's wake-up (a BLMOVE of the list onto itself) skips its reply, so no
/// worker grows, none dies, and the messages around it are delivered.
final class OversizedElementTests: XCTestCase {
    /// Peak resident memory of a process (VmHWM), in bytes.
    private func peakRSS(_ pid: Int32) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
              let kB = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") else { return nil }
        return kB * 1024
    }

    func testA200MBElementIsOneDeadLetterAndNoWorkerGrows() async throws {
        let redis = try RedisServer()
        defer { redis.kill() }
        let apns = try await EmulatorStandIn()
        let client = RedisConnection(url: redis.url, name: "test-client")
        addTeardownBlock { await client.close() }
        let keys = RedisKeys()
        let workers = try (0..<3).map { n in
            try WorkerProcess(environment: apns.workerEnvironment(redis: redis, ["WORKER_ID": "big-\(n)"]),
                              logFile: makeTemporaryDirectory("big-\(n)") + "/worker.log")
        }
        defer { workers.forEach { $0.signal(SIGKILL) } }
        let huge = #"{"id":"huge","topic":"com.example.chat","tokens":[""# + String(repeating: "a", count: 200 << 20) + #""],"payload":{}}"#
        try await client.lpush(keys.queue, [messageJSON(id: "before", tokens: [token("c1", 1)])])
        try await client.lpush(keys.queue, [huge])
        try await client.lpush(keys.queue, [messageJSON(id: "after", tokens: [token("c1", 2)])])
        try await eventually(timeout: .seconds(120)) {
            let deadLetters = try await client.length(keys.deadLetters)
            return deadLetters == 1 && apns.answeredCount(status: 200) == 2
        }
        let record = jsonObject(Array(try await client.strings(keys.deadLetters)[0].utf8))
        XCTAssertEqual(record["reason"] as? String, "Malformed: element is \(huge.utf8.count) bytes, over the 1048576-byte limit")
        XCTAssertEqual((record["raw"] as? String)?.utf8.count, 1024)
        for worker in workers {
            XCTAssertTrue(worker.process.isRunning, "no worker died: \(worker.log.suffix(2000))")
            let peak = peakRSS(worker.pid) ?? 0
            printFigure("oversized: worker \(worker.pid) peak RSS \(peak >> 20) MB after a 200 MB element")
            XCTAssertFalse(worker.log.contains("invalid message"), "the element was never claimed and parsed")
            XCTAssertLessThan(peak, 100 << 20, "the element never entered the worker")
        }
        for worker in workers { worker.signal(SIGTERM) }
        for worker in workers { _ = await worker.waitForExit(timeout: 30) }
        await apns.stop()
    }
}
