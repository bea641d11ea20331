import Foundation
import PushCore
import QueueProtocol
import RedisClient
import TestSupport
import XCTest

/// The word lists change under a running worker: picked up on SIGHUP and by the periodic check, a broken
/// file keeps the previous lists, and the reloads are counted.
final class FilterReloadTests: XCTestCase {
    func testListsReloadOnSIGHUPWithoutARestartAndABrokenFileKeepsThePreviousList() async throws {
        let redis = try RedisServer()
        let apns = try await EmulatorStandIn()
        let client = RedisConnection(url: redis.url, name: "test-client")
        addTeardownBlock { await client.close() }
        let keys = RedisKeys()
        let directory = makeTemporaryDirectory("filter-reload")
        let words = directory + "/words.txt"
        try "spam\n".write(toFile: words, atomically: true, encoding: .utf8)
        let port = freePort()
        let worker = try WorkerProcess(environment: apns.workerEnvironment(redis: redis, [
            "FILTER_WORDS_FILE": words, "FILTER_RELOAD_INTERVAL_MS": "600000",  // only SIGHUP
            "COLLECTOR_WINDOW_MS": "20", "METRICS_LISTEN": "127.0.0.1:\(port)",
        ]), logFile: directory + "/worker.log")
        defer { worker.signal(SIGKILL) }
        try await eventually(timeout: .seconds(30)) { await httpGet("http://127.0.0.1:\(port)/readyz")?.status == 200 }

        let numbers = ["one": 1, "two": 2, "three": 3, "four": 4]
        func send(_ id: String, _ alert: String) async throws {
            try await client.lpush(keys.queue, [messageJSON(id: id, tokens: [token("a1", numbers[id]!)], alert: alert)])
        }
        func filteredIDs() async throws -> [String] {
            try await client.strings(keys.filtered).compactMap { jsonObject($0)["message_id"] as? String }
        }

        try await send("one", "eggs and spam")
        try await eventually(timeout: .seconds(15)) { try await filteredIDs() == ["one"] }

        // The file changes; the worker notices on SIGHUP.
        try "eggs\n".write(toFile: words, atomically: true, encoding: .utf8)
        worker.signal(SIGHUP)
        try await eventually(timeout: .seconds(15)) { worker.log.contains("sensitive-word lists reloaded") }
        try await send("two", "just spam")
        try await send("three", "green eggs")
        try await eventually(timeout: .seconds(15)) { Set(try await filteredIDs()) == ["one", "three"] }
        try await eventually(timeout: .seconds(15)) { apns.answered().contains { $0.token == token("a1", 2) && $0.status == 200 } }

        // A broken file: logged, counted, and the previous list stays in force.
        try Data([0x65, 0x67, 0xFF]).write(to: URL(fileURLWithPath: words))
        worker.signal(SIGHUP)
        try await eventually(timeout: .seconds(15)) { worker.log.contains("sensitive-word list not reloaded") }
        try await send("four", "more eggs")
        try await eventually(timeout: .seconds(15)) { Set(try await filteredIDs()) == ["one", "three", "four"] }
        let metrics = await httpGet("http://127.0.0.1:\(port)/metrics")?.body ?? ""
        XCTAssertEqual(prometheusSample(metrics, "push_filter_reloads_total", ["result": "ok"]), 1, metrics)
        XCTAssertEqual(prometheusSample(metrics, "push_filter_reloads_total", ["result": "failed"]), 1, metrics)
        XCTAssertEqual(prometheusSample(metrics, "push_filter_words"), 1, metrics)
        XCTAssertFalse(worker.log.contains("exited"), "SIGHUP must never end the worker")

        await apns.stop()
        redis.kill()
    }

    func testAChangedFileIsNoticedWithoutASignal() async throws {
        let redis = try RedisServer()
        let apns = try await EmulatorStandIn()
        let directory = makeTemporaryDirectory("filter-watch")
        let words = directory + "/words.txt"
        try "spam\n".write(toFile: words, atomically: true, encoding: .utf8)
        let worker = try WorkerProcess(environment: apns.workerEnvironment(redis: redis, [
            "FILTER_WORDS_FILE": words, "FILTER_RELOAD_INTERVAL_MS": "200",
        ]), logFile: directory + "/worker.log")
        defer { worker.signal(SIGKILL) }
        try await eventually(timeout: .seconds(30)) { worker.log.contains("worker started") }
        try await Task.sleep(for: .milliseconds(500))
        XCTAssertFalse(worker.log.contains("reloaded"), "an unchanged file is not loaded again")
        try "spam\neggs\n".write(toFile: words, atomically: true, encoding: .utf8)
        try await eventually(timeout: .seconds(10)) { worker.log.contains("sensitive-word lists reloaded") }
        XCTAssertTrue(worker.log.contains("words=2"), worker.log)
        await apns.stop()
        redis.kill()
    }
}
