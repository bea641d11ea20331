import Foundation
import PushCore
import QueueProtocol
import RedisClient
import TestSupport
import XCTest

/// Issue 32: the tools read a poison dead letter of an element that is not UTF-8 like any other dead letter.
final class PoisonDeadLetterToolTests: ToolTestCase {
    private var opened: [RedisConnection] = []

    override func tearDown() async throws {
        for connection in opened { await connection.close() }
        try await super.tearDown()
    }

    /// Not UTF-8 (and so not JSON): a lone continuation byte and a 0xFF inside.
    private let element: [UInt8] = Array(#"{"id":"bin","topic":"t"#.utf8) + [0x80, 0xFF] + Array(#""}"#.utf8)

    /// `element` held by three workers that died: dead-lettered as PoisonMessage by recovery.
    private func poison() async throws {
        _ = try await client.execute(bytes: [Array("LPUSH".utf8), Array(keys.queue.utf8), element])
        for death in 1...3 {
            let holder = "holder\(death)"
            let worker = RedisConnection(url: redis.url, name: holder)
            opened.append(worker)
            let queue = WorkQueue(connection: worker, keys: keys, workerID: holder, maxDeliveries: 3)
            _ = try await queue.claim(maxCount: 10, maxBytes: 1 << 20, allowIsolated: true)
            _ = try await queue.recover(worker: holder, onlyIfDead: false, countDeath: true)
        }
        try await assertEqual(try await client.length(keys.deadLetters), 1)
    }

    func testDeadLetterViewsReadIt() async throws {
        try await poison()
        let list = try await tool(["dlq", "list", "--reason", "PoisonMessage"])
        XCTAssertEqual(list.status, 0, list.output)
        XCTAssertTrue(list.output.contains("PoisonMessage"), list.output)
        let stats = try await tool(["dlq", "stats", "--json"])
        XCTAssertEqual(stats.status, 0, stats.output)
        XCTAssertEqual(jsonObject(stats.output)["by_reason"] as? [String: Int], ["PoisonMessage": 1], stats.output)
    }

    /// docs/security.md: a replay gets every byte back (from `raw_base64`), not the text with U+FFFD in it.
    func testAReplayPutsBackTheExactBytes() async throws {
        try await poison()
        let replay = try await tool(["dlq", "replay", "--reason", "PoisonMessage", "--include-permanent", "--yes"])
        XCTAssertEqual(replay.status, 0, replay.output)
        let queued = try await client.execute(["LRANGE", keys.queue, "0", "-1"]).array?.compactMap(\.bytes)
        XCTAssertEqual(queued, [element], "the element exactly as the producer wrote it")
        try await assertEqual(try await client.length(keys.deadLetters), 0)
    }
}
