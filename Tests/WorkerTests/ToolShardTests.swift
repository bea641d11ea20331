import Foundation
import PushCore
import QueueProtocol
import RedisClient
import TestSupport
import XCTest

/// `--shard` on every tool that reads or writes the shards' keys (docs/tools.md and docs/queue-protocol.md): with `redis.shards`,
/// each tool works on the shard named or across all of them. Two hash-tagged key sets on one redis-server.
final class ToolShardTests: ToolTestCase {
    let shards = [RedisKeys(prefix: "push:{0}"), RedisKeys(prefix: "push:{1}")]

    override func setUp() async throws {
        try await super.setUp()
        toolEnvironment = ["REDIS_SHARDS": shards.map(\.prefix).joined(separator: ",")]
    }

    private func deadLetter(_ id: String, reason: String = "ServiceUnavailable", ageMillis: Int64 = 60_000) -> String {
        let raw = Array(messageJSON(id: id, tokens: [token("a1", 1)]).utf8)
        return String(decoding: OutcomeRecords.deadLetter(raw: raw, failedTokens: nil, reason: reason, status: 503, attempts: 1,
                                                          failedAtMillis: WallClock.nowMillis() - ageMillis, worker: "w"), as: UTF8.self)
    }

    func testEnqueueAndStatusTakeAShard() async throws {
        let pushed = try await tool(["enqueue", "--shard", "push:{1}", "--topic", "com.example.chat", "--token", token("a1", 1),
                                     "--alert", "hi", "--id", "s1"])
        XCTAssertEqual(pushed.status, 0, pushed.output)
        XCTAssertTrue(pushed.output.contains("to push:{1}:queue"), pushed.output)
        try await assertEqual(try await client.length(shards[1].queue), 1)
        try await assertEqual(try await client.length(shards[0].queue), 0)

        let one = try await tool(["status", "--json", "--shard", "push:{1}"])
        XCTAssertEqual(one.status, 0, one.output)
        let rows = (try JSONSerialization.jsonObject(with: Data(one.output.utf8)) as? [[String: Any]]) ?? []
        XCTAssertEqual(rows.map { $0["prefix"] as? String }, ["push:{1}"], one.output)
        XCTAssertEqual(rows.first?["queued"] as? Int, 1)
        let all = try await tool(["status", "--json"])
        let allRows = (try JSONSerialization.jsonObject(with: Data(all.output.utf8)) as? [[String: Any]]) ?? []
        XCTAssertEqual(allRows.map { $0["prefix"] as? String }, ["push:{0}", "push:{1}"], all.output)

        for command in [["status"], ["enqueue", "--topic", "com.example.chat", "--token", token("a1", 2), "--alert", "x"], ["dlq", "stats"],
                        ["dlq", "list"], ["dlq", "show", "0"], ["dlq", "replay", "--dry-run"], ["dlq", "purge", "--yes"],
                        ["dlq", "export"], ["dlq", "import", "/dev/null"]] {
            let unknown = try await tool(command + ["--shard", "push:{7}"])
            XCTAssertEqual(unknown.status, 2, "\(command): a shard not configured is bad usage: \(unknown.output)")
            XCTAssertTrue(unknown.output.contains("--shard push:{7} is not one of push:{0}, push:{1}"), unknown.output)
        }
    }

    func testDeadLetterToolsWorkOnTheShardNamedOrAcrossAll() async throws {
        try await client.lpush(shards[0].deadLetters, [deadLetter("a1"), deadLetter("a2")])
        try await client.lpush(shards[1].deadLetters, [deadLetter("b1"), deadLetter("b2", reason: "InternalServerError")])

        let stats = try await tool(["dlq", "stats", "--json", "--shard", "push:{1}"])
        XCTAssertEqual(jsonObject(stats.output)["by_reason"] as? [String: Int], ["ServiceUnavailable": 1, "InternalServerError": 1], stats.output)
        let statsAll = try await tool(["dlq", "stats", "--json"])
        XCTAssertEqual(jsonObject(statsAll.output)["dead_letters"] as? Int, 4, statsAll.output)

        let list = try await tool(["dlq", "list", "--shard", "push:{0}"])
        XCTAssertEqual(list.status, 0, list.output)
        XCTAssertTrue(list.output.contains("a2") && list.output.contains("a1") && !list.output.contains("b1"), list.output)
        XCTAssertTrue(list.output.contains("push:{0}"), "each line names its shard: \(list.output)")

        // One entry by index: which shard's index must be said when there are several.
        let ambiguous = try await tool(["dlq", "show", "0"])
        XCTAssertEqual(ambiguous.status, 2, ambiguous.output)
        XCTAssertTrue(ambiguous.output.contains("give --shard"), ambiguous.output)
        let show = try await tool(["dlq", "show", "0", "--shard", "push:{1}"])
        XCTAssertEqual(show.status, 0, show.output)
        XCTAssertEqual((jsonObject(show.output)["message"] as? [String: Any])?["id"] as? String, "b2", show.output)

        let export = try await tool(["dlq", "export", "--shard", "push:{1}"])
        XCTAssertEqual(export.status, 0, export.output)
        let exported = export.output.split(separator: "\n").compactMap { (jsonObject(String($0))["message"] as? [String: Any])?["id"] as? String }
        XCTAssertEqual(exported, ["b1", "b2"], "oldest first, only that shard")
        let file = "\(directory!)/b.jsonl"
        try export.output.split(separator: "\n").filter { $0.hasPrefix("{") }.joined(separator: "\n").write(toFile: file, atomically: true, encoding: .utf8)

        let replay = try await tool(["dlq", "replay", "--shard", "push:{1}", "--reason", "ServiceUnavailable", "--yes"])
        XCTAssertEqual(replay.status, 0, replay.output)
        try await assertEqual(try await client.length(shards[1].queue), 1)
        try await assertEqual(try await client.length(shards[0].queue), 0, "the other shard is untouched")

        let purge = try await tool(["dlq", "purge", "--shard", "push:{0}", "--yes"])
        XCTAssertEqual(purge.status, 0, purge.output)
        try await assertEqual(try await client.length(shards[0].deadLetters), 0)
        try await assertEqual(try await client.length(shards[1].deadLetters), 1)

        let ambiguousImport = try await tool(["dlq", "import", file])
        XCTAssertEqual(ambiguousImport.status, 2, ambiguousImport.output)
        let imported = try await tool(["dlq", "import", file, "--shard", "push:{0}"])
        XCTAssertEqual(imported.status, 0, imported.output)
        try await assertEqual(try await client.length(shards[0].deadLetters), 2)
    }

    /// `--max` bounds the whole run, not each shard: two shards, `--max 3`, three entries in all.
    func testMaxIsOneBudgetAcrossShards() async throws {
        try await client.lpush(shards[0].deadLetters, [deadLetter("a1"), deadLetter("a2")])
        try await client.lpush(shards[1].deadLetters, [deadLetter("b1"), deadLetter("b2")])
        let export = try await tool(["dlq", "export", "--max", "3"])
        XCTAssertEqual(export.output.split(separator: "\n").filter { $0.hasPrefix("{") }.count, 3, export.output)
        let plan = try await tool(["dlq", "replay", "--max", "3", "--dry-run", "--json"])
        let planned = plan.output.split(separator: "\n").map { jsonObject(String($0))["to_replay"] as? Int ?? 0 }.reduce(0, +)
        XCTAssertEqual(planned, 3, plan.output)
        let replay = try await tool(["dlq", "replay", "--max", "3", "--yes"])
        XCTAssertEqual(replay.status, 0, replay.output)
        let queued = try await client.length(shards[0].queue) + client.length(shards[1].queue)
        XCTAssertEqual(queued, 3, replay.output)
        let purge = try await tool(["dlq", "purge", "--max", "1", "--yes"])
        XCTAssertEqual(purge.status, 0, purge.output)
        let left = try await client.length(shards[0].deadLetters) + client.length(shards[1].deadLetters)
        XCTAssertEqual(left, 0, "one entry was left, --max 1 purged it: \(purge.output)")
    }
}
