import Foundation
import PushCore
import QueueProtocol
import RedisClient
import TestSupport
import XCTest

/// `worker dlq replay` against a real redis-server: selection, dry-run, feedback and expiry, rate, and
/// interruption (SIGKILL) or two replays at once, after which dead letters plus queue always add up.
final class ReplayTests: ToolTestCase {
    private func replay(_ arguments: [String]) async throws -> (status: Int32?, output: String) {
        try await tool(["dlq", "replay"] + arguments)
    }

    private func deadLetter(_ id: String, reason: String, tokens: [String], topic: String = "com.example.chat",
                            extra: [String: Any] = [:], raw: String? = nil) -> String {
        let element = raw ?? messageJSON(id: id, tokens: tokens, topic: topic, extra: extra)
        return String(decoding: OutcomeRecords.deadLetter(raw: Array(element.utf8), failedTokens: raw == nil ? tokens : nil,
                                                          reason: reason, status: nil, attempts: 5,
                                                          failedAtMillis: WallClock.nowMillis() - 60_000, worker: "w"), as: UTF8.self)
    }

    func testSelectionDryRunFeedbackExpiryAndPermanentFailures() async throws {
        let dead = token("a1", 99)
        try await client.lpush(keys.feedback, [#"{"token":"\#(dead)","reason":"Unregistered"}"#])
        try await client.lpush(keys.deadLetters, [
            deadLetter("a", reason: "ServiceUnavailable", tokens: [token("a1", 1), dead]),
            deadLetter("b", reason: "BadDeviceToken", tokens: [token("a1", 2)]),
            deadLetter("c", reason: "ServiceUnavailable", tokens: [token("a1", 3)], extra: ["expiration": 1_000_000]),
            deadLetter("d", reason: "Timeout", tokens: [token("a1", 4)], topic: "com.other"),
            deadLetter("e", reason: "Malformed: not JSON (unexpected end of input at byte 5)", tokens: [], raw: "{\"id\""),
        ])
        let plan = try await replay(["--dry-run", "--json"])
        XCTAssertEqual(plan.status, 0, plan.output)
        let counts = jsonObject(plan.output.split(separator: "\n").first.map(String.init) ?? "")
        XCTAssertEqual(counts["to_replay"] as? Int, 2, plan.output)
        XCTAssertEqual(counts["dead_tokens_dropped"] as? Int, 1)
        XCTAssertEqual(counts["skipped"] as? [String: Int], [
            "permanent (BadDeviceToken)": 1, "expired": 1, "permanent (Malformed: not JSON (unexpected end of input at byte 5))": 1,
        ])
        XCTAssertEqual(counts["by_topic"] as? [String: Int], ["com.example.chat": 1, "com.other": 1])
        try await assertEqual(try await client.length(keys.deadLetters), 5, "a dry run changes nothing")
        try await assertEqual(try await client.length(keys.queue), 0)

        let some = try await replay(["--reason", "ServiceUnavailable", "--yes"])
        XCTAssertEqual(some.status, 0, some.output)
        let queued = try await client.strings(keys.queue).map(jsonObject)
        XCTAssertEqual(queued.map { $0["id"] as? String }, ["a"])
        XCTAssertEqual(queued.first?["tokens"] as? [String], [token("a1", 1)], "the dead token is dropped")
        try await assertEqual(try await client.length(keys.deadLetters), 4)

        let permanent = try await replay(["--reason", "Malformed: not JSON (unexpected end of input at byte 5)", "--include-permanent", "--yes"])
        XCTAssertEqual(permanent.status, 0, permanent.output)
        try await assertEqual(try await client.strings(keys.queue).first, "{\"id\"", "an unparsed element goes back byte for byte")

        let nothing = try await replay(["--message-id", "nope", "--yes"])
        XCTAssertEqual(nothing.status, 1, "nothing matched")
        let audit = try await client.strings(keys.deadLetters + ":audit").map(jsonObject)
        XCTAssertEqual(audit.count, 4, "every run leaves an audit line")
        XCTAssertEqual(audit.last?["dry_run"] as? Bool, true)
        XCTAssertEqual(audit.first?["selection"] as? String, "--message-id nope")
    }

    func testRateLimitsMessagesPerSecond() async throws {
        try await client.lpush(keys.deadLetters, (0..<150).map { deadLetter("r\($0)", reason: "Timeout", tokens: [token("a1", $0)]) })
        let began = ContinuousClock.now
        let result = try await replay(["--rate", "100", "--yes"])
        let took = ContinuousClock.now - began
        XCTAssertEqual(result.status, 0, result.output)
        try await assertEqual(try await client.length(keys.queue), 150)
        XCTAssertGreaterThan(took, .milliseconds(1400), "150 at 100/s takes about 1.5 s")
    }

    func testInterruptedAndConcurrentReplaysNeitherLoseNorDuplicate() async throws {
        let total = 3000
        try await client.lpush(keys.deadLetters, (0..<total).map { deadLetter("k\($0)", reason: "Timeout", tokens: [token("a1", $0)]) })
        var generator = SystemRandomNumberGenerator()
        for round in 0..<3 {
            let victim = try start(["dlq", "replay", "--rate", "3000", "--yes"])
            try await Task.sleep(for: .milliseconds(Int.random(in: 150...450, using: &generator)))
            victim.signal(SIGKILL)
            _ = await victim.waitForExit(timeout: 5)
            let left = try await client.length(keys.deadLetters) + client.length(keys.deadLetterHold)
            let queued = try await client.length(keys.queue)
            XCTAssertEqual(left + queued, total, "after kill \(round): every entry is in exactly one place")
        }
        // Two replays at once finish the job.
        let first = try start(["dlq", "replay", "--yes"])
        let second = try start(["dlq", "replay", "--yes"])
        let statuses = [await first.waitForExit(timeout: 60), await second.waitForExit(timeout: 60)]
        XCTAssertTrue(statuses.allSatisfy { $0 == 0 || $0 == 1 }, "\(statuses): \(first.log) \(second.log)")
        try await assertEqual(try await client.length(keys.deadLetters), 0)
        let ids = try await client.strings(keys.queue).map { jsonObject($0)["id"] as? String ?? "" }
        XCTAssertEqual(ids.count, total)
        XCTAssertEqual(Set(ids).count, total, "no message twice")
    }

    /// Issue 17: a replay is linear in the entries it walks. Of 100,000 dead letters, every other one is
    /// replayed; the kept ones never make Redis search past them (no LREM: each page of the oldest leaves the
    /// list in one script, kept entries wait in the hold list), and they end where they were, in order.
    func testASelectiveReplayOfAHundredThousandDeadLettersIsLinearAndKeepsTheOrder() async throws {
        let total = 100_000
        let letters = (0..<total).map { deadLetter("h\($0)", reason: $0 % 2 == 0 ? "Timeout" : "BadTopic", tokens: [token("a1", $0)]) }
        for start in stride(from: 0, to: total, by: 10_000) { try await client.lpush(keys.deadLetters, Array(letters[start..<start + 10_000])) }
        _ = try await client.execute(["CONFIG", "RESETSTAT"])
        let result = try await replay(["--yes"])
        XCTAssertEqual(result.status, 0, result.output)
        let stats = try await client.execute(["INFO", "commandstats"]).string ?? ""
        let lines = stats.split(whereSeparator: \.isNewline)
        XCTAssertNil(lines.first { $0.hasPrefix("cmdstat_lrem:") }, "no search through the list")
        printFigure("replay of \(total) dead letters, half kept: \(lines.filter { $0.hasPrefix("cmdstat_evalsha:") || $0.hasPrefix("cmdstat_lrange:") })")
        let queued = try await client.strings(keys.queue).map { jsonObject($0)["id"] as? String ?? "" }
        XCTAssertEqual(queued.count, total / 2)
        XCTAssertEqual(queued.last, "h0", "the oldest replayed is consumed first")
        XCTAssertEqual(queued.first, "h99998")
        let kept = try await client.strings(keys.deadLetters)
        XCTAssertEqual(kept, letters.enumerated().filter { $0.offset % 2 == 1 }.map(\.element).reversed(), "kept entries stay in their order")
        try await assertEqual(try await client.length(keys.deadLetterHold), 0)
    }

    /// Entries a replay killed mid-way had set aside go back to the dead-letter list at the next replay or
    /// purge, in their order.
    func testAReplayKilledMidWayLeavesNothingAside() async throws {
        let total = 3000
        let letters = (0..<total).map { deadLetter("s\($0)", reason: $0 % 3 == 0 ? "Timeout" : "BadTopic", tokens: [token("a1", $0)]) }
        try await client.lpush(keys.deadLetters, letters)
        let victim = try start(["dlq", "replay", "--rate", "200", "--yes"])
        try await eventually(timeout: .seconds(30)) { try await self.client.length(self.keys.deadLetterHold) > 0 }
        victim.signal(SIGKILL)
        _ = await victim.waitForExit(timeout: 5)
        let held = try await client.length(keys.deadLetterHold)
        XCTAssertGreaterThan(held, 0, "the killed run had set kept entries aside")
        let purge = try await tool(["dlq", "purge", "--message-id", "nope", "--yes"])
        XCTAssertEqual(purge.status, 1, "nothing matched: \(purge.output)")
        let finish = try await replay(["--yes"])
        XCTAssertEqual(finish.status, 0, finish.output)
        try await assertEqual(try await client.length(keys.deadLetterHold), 0)
        let kept = try await client.strings(keys.deadLetters)
        XCTAssertEqual(kept, letters.enumerated().filter { $0.offset % 3 != 0 }.map(\.element).reversed(), "every kept entry back, in order")
        try await assertEqual(try await client.length(keys.queue), total / 3)
    }

    func testExportPurgeImportRoundTrip() async throws {
        let letters = (0..<5).map { deadLetter("x\($0)", reason: $0 < 3 ? "Timeout" : "BadTopic", tokens: [token("a1", $0)]) }
        try await client.lpush(keys.deadLetters, letters)
        let before = try await client.strings(keys.deadLetters)
        let exported = try await tool(["dlq", "export"])
        XCTAssertEqual(exported.status, 0, exported.output)
        let lines = exported.output.split(separator: "\n").filter { $0.hasPrefix("{") }.map(String.init)
        XCTAssertEqual(lines, Array(before.reversed()), "oldest first, byte for byte")

        let refused = try await tool(["dlq", "purge", "--reason", "Timeout"])
        XCTAssertEqual(refused.status, 2, "no terminal to ask and no --yes: nothing deleted")
        try await assertEqual(try await client.length(keys.deadLetters), 5)
        let purged = try await tool(["dlq", "purge", "--reason", "Timeout", "--yes"])
        XCTAssertEqual(purged.status, 0, purged.output)
        try await assertEqual(try await client.length(keys.deadLetters), 2)
        let all = try await tool(["dlq", "purge", "--yes"])
        XCTAssertEqual(all.status, 0, all.output)
        try await assertEqual(try await client.length(keys.deadLetters), 0)

        let file = "\(directory!)/dead.jsonl"
        try (lines.joined(separator: "\n") + "\n").write(toFile: file, atomically: true, encoding: .utf8)
        let imported = try await tool(["dlq", "import", file])
        XCTAssertEqual(imported.status, 0, imported.output)
        try await assertEqual(try await client.strings(keys.deadLetters), before, "the same entries in the same order")
        // Run again (as after an interruption): the same file resumes its run, which is complete: nothing twice.
        let rerun = try await tool(["dlq", "import", file])
        XCTAssertEqual(rerun.status, 0, rerun.output)
        XCTAssertTrue(rerun.output.contains("imported 0 dead letters"), rerun.output)
        try await assertEqual(try await client.length(keys.deadLetters), 5)
        let anew = try await tool(["dlq", "import", file, "--again"])
        XCTAssertEqual(anew.status, 0, anew.output)
        try await assertEqual(try await client.length(keys.deadLetters), 10, "--again imports the file anew")
        try await client.execute(["LTRIM", keys.deadLetters, "5", "-1"])

        let bad = "\(directory!)/bad.jsonl"
        try (lines[0] + "\n{\"not\": \"a dead letter\"}\n").write(toFile: bad, atomically: true, encoding: .utf8)
        let rejected = try await tool(["dlq", "import", bad])
        XCTAssertEqual(rejected.status, 1)
        XCTAssertTrue(rejected.output.contains("line 2: no \"reason\": not a dead letter; nothing imported"), rejected.output)
        try await assertEqual(try await client.length(keys.deadLetters), 5, "a bad file imports nothing")
        let audit = try await client.strings(keys.deadLetters + ":audit").map(jsonObject)
        XCTAssertEqual(audit.compactMap { $0["purged"] as? Int }, [2, 3])
    }
}
