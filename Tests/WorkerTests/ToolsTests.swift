@testable import FCMProvider
import Foundation
import PushCore
import QueueProtocol
import RedisClient
import TestSupport
import XCTest

/// `worker enqueue`, `worker status` and the read-only `worker dlq` views, run as an operator would.
final class ToolsTests: ToolTestCase {
    /// docs/tools.md: `enqueue --provider fcm` makes an FCM message (the alert as notification.body), validated
    /// by FCM's rules (a push type is APNs-only), and a provider that is neither is bad usage.
    func testEnqueueMakesFCMMessages() async throws {
        let good = try await tool(["enqueue", "--provider", "fcm", "--topic", "com.example.chat", "--token", fcmToken("d", 1),
                                   "--alert", "hi", "--id", "android-1", "--priority", "5"])
        XCTAssertEqual(good.status, 0, good.output)
        let queued = try await client.strings(keys.queue)
        _ = PushProvider.fcm  // FCM's rules are its module's, registered as the worker registers them
        guard queued.count == 1, case .valid(let message, _) = MessageParser().parse(Array(queued[0].utf8), seq: 1, now: WallClock.nowSeconds()) else {
            return XCTFail("the worker must accept what enqueue pushed: \(queued)")
        }
        XCTAssertEqual(message.headers.provider, .fcm)
        XCTAssertEqual(String(decoding: message.payload, as: UTF8.self), #"{"android":{"priority":"normal"},"notification":{"body":"hi"}}"#)
        let apnsOnly = try await tool(["enqueue", "--provider", "fcm", "--topic", "com.example.chat", "--token", fcmToken("d", 2),
                                       "--alert", "hi", "--push-type", "voip"])
        XCTAssertEqual(apnsOnly.status, 2, apnsOnly.output)
        XCTAssertTrue(apnsOnly.output.contains("push_type"), apnsOnly.output)
        let unknown = try await tool(["enqueue", "--provider", "gcm", "--topic", "com.example.chat", "--token", fcmToken("d", 3), "--alert", "hi"])
        XCTAssertEqual(unknown.status, 2, unknown.output)
        XCTAssertTrue(unknown.output.contains("--provider must be apns, fcm, "), unknown.output)
        try await assertEqual(try await client.length(keys.queue), 1)
    }

    func testEnqueueValidatesLikeTheWorkerAndPushes() async throws {
        let good = try await tool(["enqueue", "--topic", "com.example.chat", "--token", token("a1", 1), "--alert", "hi",
                                   "--id", "op-1", "--collapse-id", "c1", "--expiration", "+60"])
        XCTAssertEqual(good.status, 0, good.output)
        XCTAssertTrue(good.output.contains("enqueued 1 message to push:queue"), good.output)
        let queued = try await client.strings(keys.queue)
        XCTAssertEqual(queued.count, 1)
        guard queued.count == 1, case .valid(let message, _) = MessageParser().parse(Array(queued[0].utf8), seq: 1, now: WallClock.nowSeconds()) else {
            return XCTFail("the worker must accept what enqueue pushed: \(queued[0])")
        }
        XCTAssertEqual(message.id, "op-1")
        XCTAssertEqual(message.headers.collapseID, "c1")
        XCTAssertNotNil(message.enqueuedAtMillis)

        let many = try await tool(["enqueue", "--topic", "com.example.chat", "--token", token("a1", 2), "--alert", "load",
                                   "--id", "load", "--count", "3", "--json"])
        XCTAssertEqual(many.status, 0, many.output)
        XCTAssertEqual(jsonObject(many.output.split(separator: "\n").last.map(String.init) ?? "")["enqueued"] as? Int, 3)
        let ids = try await client.strings(keys.queue).map { jsonObject($0)["id"] as? String ?? "" }
        XCTAssertEqual(Set(ids), ["op-1", "load-1", "load-2", "load-3"])
        // The same run again (as after an interruption) resumes it: complete, so nothing is pushed twice.
        let rerun = try await tool(["enqueue", "--topic", "com.example.chat", "--token", token("a1", 2), "--alert", "load",
                                    "--id", "load", "--count", "3", "--json"])
        XCTAssertEqual(rerun.status, 0, rerun.output)
        let rerunResult = jsonObject(rerun.output.split(separator: "\n").last.map(String.init) ?? "")
        XCTAssertEqual(rerunResult["enqueued"] as? Int, 0)
        XCTAssertEqual(rerunResult["already_enqueued"] as? Int, 3)
        try await assertEqual(try await client.length(keys.queue), 4)

        let bad = try await tool(["enqueue", "--topic", "com.example.chat", "--token", token("a1", 3), "--alert", "x", "--priority", "7"])
        XCTAssertEqual(bad.status, 2, bad.output)
        XCTAssertTrue(bad.output.contains("the worker would reject this message: Malformed: priority must be 10, 5 or 1"), bad.output)
        try await assertEqual(try await client.length(keys.queue), 4, "nothing pushed for a bad message")
    }

    func testStatusShowsQueueWorkersAndOutcomes() async throws {
        let old = WallClock.nowMillis() - 600_000
        try await client.lpush(keys.queue, [#"{"id":"q1","enqueued_at":\#(old)}"#, "{}"])
        let live = WorkQueue(connection: RedisConnection(url: redis.url, name: "live"), keys: keys, workerID: "w-live")
        addTeardownBlock { await live.connection.close() }
        try await live.beat(ttlMillis: 60_000, info: "{}")
        try await client.execute(["ZADD", keys.workers, String(WallClock.nowMillis() - 300_000), "w-dead"])
        try await client.execute(["HSET", keys.processing(worker: "w-dead"), "7", "{}", "8", "{}"])
        try await client.lpush(keys.deadLetters, ["{}"])
        let text = try await tool(["status"])
        XCTAssertEqual(text.status, 0, text.output)
        XCTAssertTrue(text.output.contains("push:queue  2 queued, oldest 10 min old"), text.output)
        XCTAssertTrue(text.output.contains("w-dead  2 claimed  heartbeat 5 min ago  DEAD, claims await recovery"), text.output)
        XCTAssertTrue(text.output.contains("workers: 1 live, 1 dead"), text.output)
        let json = try await tool(["status", "--json"])
        let shard = (try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [[String: Any]])?.first ?? [:]
        XCTAssertEqual(shard["queued"] as? Int, 2)
        XCTAssertEqual(shard["dead_workers_with_claims"] as? Int, 1)
        XCTAssertEqual(shard["dead_letters"] as? Int, 1)
        XCTAssertGreaterThanOrEqual(shard["oldest_age_ms"] as? Int ?? 0, 600_000)
    }

    func testDeadLetterViewsCountListAndShowWithoutChangingAnything() async throws {
        func letter(_ id: String, _ reason: String, _ status: Int?, topic: String, ageMillis: Int64) -> String {
            let raw = Array(messageJSON(id: id, tokens: [token("a1", 1)], topic: topic).utf8)
            return String(decoding: OutcomeRecords.deadLetter(raw: raw, failedTokens: nil, reason: reason, status: status, attempts: 1,
                                                              failedAtMillis: WallClock.nowMillis() - ageMillis, worker: "w"), as: UTF8.self)
        }
        try await client.lpush(keys.deadLetters, [
            letter("m1", "BadTopic", 400, topic: "com.a", ageMillis: 10_000),
            letter("m2", "ServiceUnavailable", 503, topic: "com.a", ageMillis: 7_200_000),
            letter("m3", "ServiceUnavailable", 503, topic: "com.b", ageMillis: 1_000),
        ])
        try await client.lpush(keys.feedback, ["{}", "{}"])
        let stats = try await tool(["dlq", "stats", "--json"])
        XCTAssertEqual(stats.status, 0, stats.output)
        let counts = jsonObject(stats.output)
        XCTAssertEqual(counts["dead_letters"] as? Int, 3)
        XCTAssertEqual(counts["feedback"] as? Int, 2)
        XCTAssertEqual(counts["by_reason"] as? [String: Int], ["BadTopic": 1, "ServiceUnavailable": 2])
        XCTAssertEqual(counts["by_topic"] as? [String: Int], ["com.a": 2, "com.b": 1])
        XCTAssertEqual(counts["by_age"] as? [String: Int], ["under 1 h": 2, "1 h to 1 d": 1])

        let list = try await tool(["dlq", "list", "--reason", "ServiceUnavailable"])
        XCTAssertEqual(list.status, 0, list.output)
        XCTAssertEqual(list.output.split(separator: "\n").map { $0.split(separator: " ").first.map(String.init) ?? "" }, ["0", "1"],
                       "newest first, with the index `dlq show` takes:\n\(list.output)")
        XCTAssertTrue(list.output.contains("ServiceUnavailable  m3  com.b"), list.output)
        let none = try await tool(["dlq", "list", "--message-id", "nope"])
        XCTAssertEqual(none.status, 1, "nothing matched")
        let show = try await tool(["dlq", "show", "2"])
        XCTAssertEqual(show.status, 0, show.output)
        XCTAssertEqual(jsonObject(show.output)["reason"] as? String, "BadTopic")
        let missing = try await tool(["dlq", "show", "9"])
        XCTAssertEqual(missing.status, 1)
        try await assertEqual(try await client.length(keys.deadLetters), 3, "the views change nothing")
    }

    /// FCM's dead letters name its error code alone as `reason`, Google's words in `detail`; the tools select,
    /// count and skip by the code, and read a record of 0.5.0 (`"CODE: words"`) as its code.
    func testFCMReasonsAreCodesToSelectionStatsAndReplay() async throws {
        func letter(_ id: String, _ reason: String, detail: String?) -> String {
            let raw = Array(fcmMessageJSON(id: id, tokens: [fcmToken("d", 1)]).utf8)
            return String(decoding: DeadLetterEntry(failedTokens: nil, reason: reason, status: 400, attempts: 1,
                                                    failedAtMillis: WallClock.nowMillis(), worker: "w", detail: detail).record(element: raw),
                          as: UTF8.self)
        }
        try await client.lpush(keys.deadLetters, [
            letter("f1", "INVALID_ARGUMENT", detail: "Invalid value at 'message.data[0].value' (TYPE_STRING)"),
            letter("f2", "INVALID_ARGUMENT: Invalid value at 'message.android.ttl'", detail: nil),
            letter("f3", "THIRD_PARTY_AUTH_ERROR", detail: "Auth error from APNS or Web Push Service"),
        ])
        let stats = try await tool(["dlq", "stats", "--json"])
        XCTAssertEqual(jsonObject(stats.output)["by_reason"] as? [String: Int], ["INVALID_ARGUMENT": 2, "THIRD_PARTY_AUTH_ERROR": 1], stats.output)
        let list = try await tool(["dlq", "list", "--reason", "INVALID_ARGUMENT"])
        XCTAssertEqual(list.output.split(separator: "\n").count, 2, list.output)
        let plan = try await tool(["dlq", "replay", "--dry-run"])
        XCTAssertEqual(plan.status, 0, plan.output)
        XCTAssertTrue(plan.output.contains("permanent (INVALID_ARGUMENT)"), plan.output)
        let show = try await tool(["dlq", "show", "2"])
        XCTAssertEqual(jsonObject(show.output)["detail"] as? String, "Invalid value at 'message.data[0].value' (TYPE_STRING)", show.output)
    }

    /// `dlq list` and `dlq stats` take docs/tools.md's whole SELECTION, the same one replay, purge and export take.
    func testDeadLetterListAndStatsTakeTheWholeSelection() async throws {
        func letter(_ id: String, _ reason: String, _ status: Int?, topic: String, ageMillis: Int64) -> String {
            let raw = Array(messageJSON(id: id, tokens: [token("a1", 1)], topic: topic).utf8)
            return String(decoding: OutcomeRecords.deadLetter(raw: raw, failedTokens: nil, reason: reason, status: status, attempts: 1,
                                                              failedAtMillis: WallClock.nowMillis() - ageMillis, worker: "w"), as: UTF8.self)
        }
        // LPUSHed oldest first: m5 is the newest (index 0).
        try await client.lpush(keys.deadLetters, [
            letter("m1", "ServiceUnavailable", 503, topic: "com.a", ageMillis: 3 * 86_400_000),
            letter("m2", "BadTopic", 400, topic: "com.a", ageMillis: 7_200_000),
            letter("m3", "ServiceUnavailable", 503, topic: "com.b", ageMillis: 600_000),
            letter("m4", "InternalServerError", 500, topic: "com.a", ageMillis: 60_000),
            letter("m5", "ServiceUnavailable", 503, topic: "com.a", ageMillis: 1_000),
        ])
        func ids(_ arguments: [String]) async throws -> [String] {
            let result = try await tool(["dlq", "list", "--json"] + arguments)
            return result.output.split(separator: "\n").compactMap { (jsonObject(String($0))["message"] as? [String: Any])?["id"] as? String }
        }
        var listed = try await ids(["--status", "503"])
        XCTAssertEqual(listed, ["m5", "m3", "m1"])
        listed = try await ids(["--older-than", "1h"])
        XCTAssertEqual(listed, ["m2", "m1"])
        listed = try await ids(["--newer-than", "15m"])
        XCTAssertEqual(listed, ["m5", "m4", "m3"])
        listed = try await ids(["--newer-than", "1d", "--older-than", "5m"])
        XCTAssertEqual(listed, ["m3", "m2"])
        listed = try await ids(["--reason", "ServiceUnavailable", "--reason", "BadTopic", "--topic", "com.a"])
        XCTAssertEqual(listed, ["m5", "m2", "m1"])
        listed = try await ids(["--max", "2"])
        XCTAssertEqual(listed, ["m5", "m4"], "--max: the first N selected, newest first")
        listed = try await ids(["--status", "503", "--max", "5", "--limit", "1"])
        XCTAssertEqual(listed, ["m5"])
        let text = try await tool(["dlq", "list", "--older-than", "1h"])
        XCTAssertEqual(text.output.split(separator: "\n").map { $0.split(separator: " ").first.map(String.init) ?? "" }, ["3", "4"],
                       "the indices `dlq show` takes:\n\(text.output)")
        let none = try await tool(["dlq", "list", "--status", "429"])
        XCTAssertEqual(none.status, 1, "nothing matched: \(none.output)")
        for bad in [["--older-than", "soon"], ["--max", "0"], ["--status", "x"], ["--limit", "0"]] {
            let result = try await tool(["dlq", "list"] + bad)
            XCTAssertEqual(result.status, 2, "bad usage: \(bad): \(result.output)")
        }

        let stats = try await tool(["dlq", "stats", "--json", "--topic", "com.a", "--newer-than", "1d"])
        XCTAssertEqual(stats.status, 0, stats.output)
        let counts = jsonObject(stats.output)
        XCTAssertEqual(counts["dead_letters"] as? Int, 3, stats.output)
        XCTAssertEqual(counts["by_reason"] as? [String: Int], ["ServiceUnavailable": 1, "BadTopic": 1, "InternalServerError": 1])
        try await assertEqual(try await client.length(keys.deadLetters), 5, "the views change nothing")
    }

    /// Ids, topics, reasons and worker ids come from Redis, where whoever can write may put ESC or CR in them: the
    /// text output shows every such character escaped (a terminal acts on none of them), `--json` stays exact.
    func testTextOutputEscapesWhatATerminalWouldActOn() async throws {
        let id = "m\u{1B}[2J\r-1"
        let topic = "com.\u{1B}]0;owned\u{07}\r\u{9B}31m"
        let raw = Array(messageJSON(id: id, tokens: [token("a1", 1)], topic: topic).utf8)
        let stored = String(decoding: OutcomeRecords.deadLetter(raw: raw, failedTokens: nil, reason: "Bad\u{1B}[31mGateway", status: 502,
                                                                attempts: 1, failedAtMillis: WallClock.nowMillis(), worker: "w"), as: UTF8.self)
        try await client.lpush(keys.deadLetters, [stored])
        try await client.execute(["ZADD", keys.workers, String(WallClock.nowMillis()), "w\u{1B}[1A\r"])
        func assertPrintable(_ output: String, _ what: String, file: StaticString = #filePath, line: UInt = #line) {
            let raw = output.unicodeScalars.filter { $0 != "\n" && $0.properties.generalCategory == .control }
            XCTAssertTrue(raw.isEmpty, "\(what) printed U+\(raw.map { String($0.value, radix: 16) }): \(output.debugDescription)",
                          file: file, line: line)
        }
        let escapedID = #"m\u{1b}[2J\u{d}-1"#, escapedTopic = #"com.\u{1b}]0;owned\u{7}\u{d}\u{9b}31m"#
        let escapedReason = #"Bad\u{1b}[31mGateway"#

        let list = try await tool(["dlq", "list"])
        XCTAssertEqual(list.status, 0, list.output.debugDescription)
        assertPrintable(list.output, "dlq list")
        XCTAssertTrue(list.output.contains("\(escapedReason)  \(escapedID)  \(escapedTopic)"), list.output.debugDescription)
        let stats = try await tool(["dlq", "stats"])
        assertPrintable(stats.output, "dlq stats")
        XCTAssertTrue(stats.output.contains("1  \(escapedTopic)") && stats.output.contains("1  \(escapedReason)"), stats.output.debugDescription)
        let plan = try await tool(["dlq", "replay", "--dry-run"])
        assertPrintable(plan.output, "dlq replay --dry-run")
        XCTAssertTrue(plan.output.contains("1  \(escapedTopic)"), plan.output.debugDescription)
        let status = try await tool(["status"])
        assertPrintable(status.output, "status")
        XCTAssertTrue(status.output.contains(#"  w\u{1b}[1A\u{d}  0 claimed"#), status.output.debugDescription)

        // `dlq show` escapes the JSON way: still the same JSON document.
        let show = try await tool(["dlq", "show", "0"])
        XCTAssertEqual(show.status, 0, show.output.debugDescription)
        assertPrintable(show.output, "dlq show")
        let shown = jsonObject(show.output)["message"] as? [String: Any]
        XCTAssertEqual(shown?["topic"] as? String, topic, show.output.debugDescription)
        XCTAssertEqual(shown?["id"] as? String, id)
        // For scripts, the entries exactly as stored.
        let exact = try await tool(["dlq", "show", "0", "--json"])
        XCTAssertEqual(exact.output, stored + "\n")
        let listed = try await tool(["dlq", "list", "--json"])
        XCTAssertEqual(listed.output, stored + "\n")
        let counted = try await tool(["dlq", "stats", "--json"])
        XCTAssertEqual(jsonObject(counted.output)["by_topic"] as? [String: Int], [topic: 1], counted.output.debugDescription)
    }
}
