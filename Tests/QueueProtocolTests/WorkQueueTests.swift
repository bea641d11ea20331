@testable import FCMProvider
import Foundation
import PushCore
@testable import QueueProtocol
import RedisClient
import TestSupport
import XCTest

/// The queue protocol (docs/queue-protocol.md) against a real redis-server.
final class WorkQueueTests: RedisTestCase {
    /// The connections `queue(_:)` opened: each runs a thread of its own until it is closed, in tearDown.
    private var opened: [RedisConnection] = []

    override func tearDown() async throws {
        for connection in opened { await connection.close() }
        try await super.tearDown()
    }

    private func queue(_ worker: String) -> WorkQueue {
        let connection = RedisConnection(url: redis.url, name: worker)
        opened.append(connection)
        return WorkQueue(connection: connection, keys: keys, workerID: worker)
    }

    private func claim(_ worker: WorkQueue, _ count: Int = 1000, bytes: Int = 1 << 30) async throws -> [String] {
        try await worker.claim(maxCount: count, maxBytes: bytes, allowIsolated: true).elements.map { String(decoding: $0.raw, as: UTF8.self) }
    }

    private func texts(_ claim: Claim) -> [String] { claim.elements.map { String(decoding: $0.raw, as: UTF8.self) } }

    func testClaimTakesTheOldestFirstIntoTheProcessingHashUnderIncreasingSequences() async throws {
        try await connection.lpush(keys.queue, ["a", "b", "c", "d"])  // producers LPUSH: "a" is the oldest
        let worker = queue("w1")
        let first = try await worker.claim(maxCount: 3, maxBytes: 1000, allowIsolated: false)
        XCTAssertEqual(first.elements.map { String(decoding: $0.raw, as: UTF8.self) }, ["a", "b", "c"])
        XCTAssertEqual(first.elements.map(\.seq), [1, 2, 3])
        let left = try await connection.strings(keys.queue)
        XCTAssertEqual(left, ["d"])
        let hash = try await connection.execute(["HGETALL", keys.processing(worker: "w1")]).array?.compactMap(\.string) ?? []
        XCTAssertEqual(Dictionary(uniqueKeysWithValues: stride(from: 0, to: hash.count, by: 2).map { (hash[$0], hash[$0 + 1]) }),
                       ["1": "a", "2": "b", "3": "c"], "field = claim sequence, value = the element exactly")
        let next = try await worker.claim(maxCount: 10, maxBytes: 1000, allowIsolated: false)
        XCTAssertEqual(next.elements.map(\.seq), [4])
        let nothing = try await claim(worker)
        XCTAssertTrue(nothing.isEmpty)
    }

    /// docs/queue-protocol.md: a reused sequence number never lets one message's outcome acknowledge another. Redis
    /// restarted from an older snapshot forgets the last claims and rolls `push:sequence` back; the worker
    /// still holds those claims under their sequences, so new claims must not be given them again.
    func testClaimIdentitiesStayUniqueWhenRedisComesBackFromAnOlderSnapshot() async throws {
        try await connection.lpush(keys.queue, ["a", "b", "c"])
        let worker = queue("w1")
        let early = try await worker.claim(maxCount: 10, maxBytes: 1000, allowIsolated: false)
        XCTAssertEqual(early.elements.map(\.seq), [1, 2, 3])
        _ = try await connection.execute(["SAVE"])
        try await connection.lpush(keys.queue, ["d", "e", "f"])
        let late = try await worker.claim(maxCount: 10, maxBytes: 1000, allowIsolated: false)
        XCTAssertEqual(late.elements.map(\.seq), [4, 5, 6], "claimed after the snapshot: Redis will forget these")

        redis.kill()
        try redis.start()
        var sequence: String?
        try await eventually { sequence = try? await self.connection.execute(["GET", self.keys.sequence]).string; return sequence != nil }
        XCTAssertEqual(sequence, "3", "the restored snapshot rolled the sequence back")

        try await connection.lpush(keys.queue, ["g", "h"])
        var after: Claim?
        try await eventually { after = try? await worker.claim(maxCount: 10, maxBytes: 1000, allowIsolated: false); return after != nil }
        XCTAssertEqual(after?.elements.map(\.seq), [7, 8], "never 4 and 5 again: they still name d and e in this worker")
        XCTAssertEqual(after.map(texts), ["g", "h"])

        // The outcome of "d" (sequence 4, lost with the rollback) acknowledges nothing; "g" stays claimed.
        let acknowledged = try await worker.acknowledge([CompletedMessage(seq: 4, records: [], notifications: 1)], filteredCap: 10)
        XCTAssertEqual(acknowledged, 0)
        let held = try await worker.claimedSequences().sorted()
        XCTAssertEqual(held, [1, 2, 3, 7, 8])
    }

    /// docs/operations.md: chat work is claimed first; bulk work takes at most its allowance while the chat
    /// list has work, and all it is allowed once the chat list is empty. Bulk claims are marked in their
    /// sequence (from 2^52), so acknowledging them is the same HDEL and recovery knows their list.
    func testChatIsClaimedFirstAndBulkKeepsToItsShareWhileChatHasWork() async throws {
        try await connection.lpush(keys.queue, ["c0", "c1", "c2"])
        try await connection.lpush(keys.bulkQueue, ["b0", "b1", "b2", "b3", "b4"])
        let worker = queue("w1")
        let allowance = BulkAllowance(whileChatBusy: (count: 2, bytes: 1 << 20), whileChatIdle: (count: 100, bytes: 1 << 20))
        let first = try await worker.claim(maxCount: 100, maxBytes: 1 << 20, allowIsolated: false, bulk: allowance)
        XCTAssertEqual(texts(first), ["c0", "c1", "c2", "b0", "b1"], "chat first; bulk within its share while chat has work")
        XCTAssertEqual(first.elements.map { Lane.of(claimSequence: $0.seq) }, [.chat, .chat, .chat, .bulk, .bulk])
        XCTAssertEqual(first.elements.map(\.seq), [1, 2, 3, Lane.bulkSequenceBase + 4, Lane.bulkSequenceBase + 5])
        let second = try await worker.claim(maxCount: 100, maxBytes: 1 << 20, allowIsolated: false, bulk: allowance)
        XCTAssertEqual(texts(second), ["b2", "b3", "b4"], "no chat work: bulk may take all it is allowed")
        let none = try await worker.claim(maxCount: 100, maxBytes: 1 << 20, allowIsolated: false)
        XCTAssertTrue(none.elements.isEmpty)

        let acknowledged = try await worker.acknowledge(second.elements.map { CompletedMessage(seq: $0.seq, records: [], notifications: 1) },
                                                        filteredCap: 10)
        XCTAssertEqual(acknowledged, 3, "a bulk claim is acknowledged like any other")
        try await assertEqual(try await connection.claimedCount(keys.processing(worker: "w1")), 5)
    }

    /// A broadcast element larger than bulk's byte allowance is still claimed beside chat work (the first of
    /// each list is taken even if larger), so chat pushes arriving all the time cannot starve a broadcast.
    func testALargeBulkElementIsClaimedBesideChatWork() async throws {
        let large = String(repeating: "x", count: 50_000)
        try await connection.lpush(keys.bulkQueue, [large, "b1"])
        try await connection.lpush(keys.queue, ["c0"])
        let worker = queue("w1")
        let small = BulkAllowance(whileChatBusy: (count: 10, bytes: 1000), whileChatIdle: (count: 10, bytes: 1000))
        let claim = try await worker.claim(maxCount: 100, maxBytes: 1 << 20, allowIsolated: false, bulk: small)
        XCTAssertEqual(claim.elements.map { $0.raw.count }, [2, 50_000], "the chat push and the large bulk element, not b1")
    }

    /// Recovery returns each claim to the list it came from, the oldest of each at its consuming end.
    func testRecoveryReturnsEveryClaimToItsOwnList() async throws {
        try await connection.lpush(keys.queue, ["c0", "c1"])
        try await connection.lpush(keys.bulkQueue, ["b0", "b1", "b2"])
        let dead = queue("dead")
        let all = BulkAllowance(whileChatBusy: (count: 10, bytes: 1 << 20), whileChatIdle: (count: 10, bytes: 1 << 20))
        _ = try await dead.claim(maxCount: 100, maxBytes: 1 << 20, allowIsolated: false, bulk: all)
        try await connection.lpush(keys.bulkQueue, ["b-later"])
        let recovery = try await queue("rescuer").recover(worker: "dead", onlyIfDead: true, countDeath: true)
        XCTAssertEqual(recovery.returned, 5)
        try await assertEqual(try await connection.strings(keys.queue), ["c1", "c0"])
        try await assertEqual(try await connection.strings(keys.bulkQueue), ["b-later", "b2", "b1", "b0"], "b0, the oldest, is consumed first")
    }

    func testClaimIsBoundedInBytesButAlwaysTakesOne() async throws {
        let big = String(repeating: "x", count: 5000)
        try await connection.lpush(keys.queue, [big, "small-1", "small-2"])
        let worker = queue("w1")
        try await assertEqual(try await claim(worker, bytes: 100), [big], "one element even over the bound")
        try await assertEqual(try await claim(worker, bytes: 8), ["small-1"], "then no more than the bound")
        try await assertEqual(try await claim(worker, bytes: 8), ["small-2"])
    }

    func testWaitingForWorkWakesOnTheFirstMessageWithoutTakingIt() async throws {
        let worker = queue("w1")
        let idle = try await worker.waitForWork(timeoutSeconds: 0.1)
        XCTAssertFalse(idle)
        try await connection.lpush(keys.queue, ["x", "y"])
        let before = try await connection.strings(keys.queue)
        let woke = try await worker.waitForWork(timeoutSeconds: 1)
        XCTAssertTrue(woke)
        try await assertEqual(try await connection.strings(keys.queue), before, "the queue is unchanged, its order too")
    }

    func testAcknowledgementDeletesByClaimSequenceAndWritesRecordsExactlyOnce() async throws {
        try await connection.lpush(keys.queue, ["m1", "m2", "m3"])
        let worker = queue("w1")
        let claimed = try await worker.claim(maxCount: 10, maxBytes: 1000, allowIsolated: false).elements
        let done = [
            CompletedMessage(seq: claimed[0].seq, records: [.deadLetter(Array("{\"d\":1}".utf8)), .feedback(Array("{\"f\":1}".utf8))], notifications: 1),
            CompletedMessage(seq: claimed[1].seq, records: [.filtered(Array("{\"a\":1}".utf8))], notifications: 1),
        ]
        let acknowledged = try await worker.acknowledge(done, filteredCap: 10)
        XCTAssertEqual(acknowledged, 2)
        // A retry after a lost reply must not record anything twice.
        let again = try await worker.acknowledge(done, filteredCap: 10)
        XCTAssertEqual(again, 0)
        try await assertEqual(try await connection.strings(keys.deadLetters), ["{\"d\":1}"])
        try await assertEqual(try await connection.strings(keys.feedback), ["{\"f\":1}"])
        try await assertEqual(try await connection.strings(keys.filtered), ["{\"a\":1}"])
        try await assertEqual(try await connection.claimedStrings(keys.processing(worker: "w1")), ["m3"])
    }

    /// An element over `collector.max_element_bytes` never leaves Redis: the claim dead-letters it there, with
    /// its first KB and its size, and hands over the elements around it as usual.
    func testAnOversizedElementIsDeadLetteredInsideRedisAndNeverHandedOver() async throws {
        let big = "{\"id\":\"big\",\"x\":\"" + String(repeating: "é", count: 3000) + "\"}"
        try await connection.lpush(keys.queue, ["a", big, "b"])
        let connection = RedisConnection(url: redis.url, name: "w1")
        opened.append(connection)
        let worker = WorkQueue(connection: connection, keys: keys, workerID: "w1", maxElementBytes: 4096)
        let claim = try await worker.claim(maxCount: 10, maxBytes: 1 << 20, allowIsolated: false)
        XCTAssertEqual(claim.elements.map { String(decoding: $0.raw, as: UTF8.self) }, ["a", "b"])
        XCTAssertEqual(claim.elements.map(\.seq), [1, 2], "sequences only for what was handed over")
        XCTAssertEqual(claim.oversizedDeadLettered, 1)
        let letters = try await self.connection.strings(keys.deadLetters)
        XCTAssertEqual(letters.count, 1)
        let record = jsonObject(Array(letters[0].utf8))
        XCTAssertEqual(record["reason"] as? String, "Malformed: element is \(big.utf8.count) bytes, over the 4096-byte limit")
        XCTAssertEqual(record["bytes"] as? Int, big.utf8.count)
        XCTAssertEqual(record["worker"] as? String, "w1")
        XCTAssertTrue(record["message"] is NSNull)
        let raw = record["raw"] as? String ?? ""
        XCTAssertTrue(raw.hasPrefix("{\"id\":\"big\""), raw)
        XCTAssertEqual(raw.utf8.count, 1024, "the first KB, non-ASCII bytes as '?'")
        try await assertEqual(try await self.connection.length(keys.queue), 0)
    }

    /// `retention.dlq_max` and `retention.feedback_max`: the lists keep the newest entries only (privacy: they
    /// hold what users wrote and device tokens); 0 keeps all.
    func testRetentionCapsTheDeadLetterAndFeedbackLists() async throws {
        try await connection.lpush(keys.queue, (0..<5).map { "m\($0)" })
        let connection = RedisConnection(url: redis.url, name: "w1")
        opened.append(connection)
        let worker = WorkQueue(connection: connection, keys: keys, workerID: "w1", retention: (deadLetters: 2, feedback: 3))
        let claimed = try await worker.claim(maxCount: 10, maxBytes: 1 << 20, allowIsolated: false).elements
        let done = claimed.enumerated().map { n, element in
            CompletedMessage(seq: element.seq, records: [.deadLetter(Array("{\"d\":\(n)}".utf8)), .feedback(Array("{\"f\":\(n)}".utf8))],
                             notifications: 1)
        }
        try await assertEqual(try await worker.acknowledge(done, filteredCap: 10), 5)
        try await assertEqual(try await self.connection.strings(keys.deadLetters), ["{\"d\":4}", "{\"d\":3}"])
        try await assertEqual(try await self.connection.strings(keys.feedback), ["{\"f\":4}", "{\"f\":3}", "{\"f\":2}"])
    }

    /// Isolation: a parked message's element moves, as written, from the processing hash to its app's parked
    /// list in the acknowledgement's one step; a retry or a message recovered meanwhile moves nothing twice; the
    /// unpark script puts the parked elements back at the queue's consumer end in their order.
    func testParkingMovesTheElementOnceAndUnparkingPutsItBackNextInOrder() async throws {
        try await connection.lpush(keys.queue, ["p1", "p2", "p3", "x"])
        let worker = queue("w1")
        let claimed = try await worker.claim(maxCount: 3, maxBytes: 1000, allowIsolated: false).elements
        let list = keys.parked(provider: .fcm, topic: "com.example.chat", lane: .chat)
        let done = claimed.map { CompletedMessage(seq: $0.seq, records: [.parked(list: list)], notifications: 1) }
        // p3 was recovered by a peer meanwhile: its field is gone, so nothing of it is parked here.
        _ = try await connection.execute(["HDEL", keys.processing(worker: "w1"), String(claimed[2].seq)])
        try await assertEqual(try await worker.acknowledge(done, filteredCap: 10), 2)
        try await assertEqual(try await worker.acknowledge(done, filteredCap: 10), 0, "a retry parks nothing twice")
        try await assertEqual(try await connection.strings(list), ["p2", "p1"])
        try await assertEqual(try await connection.claimedStrings(keys.processing(worker: "w1")), [])
        try await assertEqual(try await worker.parkedCount(provider: .fcm, topic: "com.example.chat"), 2)

        // Two calls of one: the parked list comes back oldest first as a whole.
        try await assertEqual(try await worker.unpark(provider: .fcm, topic: "com.example.chat", messageClass: .chat, maxCount: 1), 1)
        try await assertEqual(try await worker.unpark(provider: .fcm, topic: "com.example.chat", messageClass: .chat, maxCount: 1), 1)
        try await assertEqual(try await worker.unpark(provider: .fcm, topic: "com.example.chat", messageClass: .chat), 0)
        try await assertEqual(try await connection.execute(["EXISTS", list]).integer, 0)
        let next = try await claim(worker, 10)
        XCTAssertEqual(next, ["p1", "p2", "x"], "parked work comes back first, oldest first, ahead of what waited in the queue")
    }

    /// The pipeline keeps no element in memory: a dead letter is drafted, and the acknowledgement makes its
    /// record from the element the processing hash holds. An element gone meanwhile (recovered elsewhere) gets
    /// no record from this worker, and a retry writes nothing twice.
    func testDraftedDeadLettersAreMadeFromTheElementInTheProcessingHash() async throws {
        let elements = [#"{"id":"d1","tokens":["aa","bb"],"payload":{"x":1}}"#, #"{"id":"d2","tokens":["cc"]}"#, "plain"]
        try await connection.lpush(keys.queue, elements)
        let worker = queue("w1")
        let claimed = try await worker.claim(maxCount: 10, maxBytes: 1000, allowIsolated: false).elements
        XCTAssertEqual(claimed.map { String(decoding: $0.raw, as: UTF8.self) }, elements)
        let draft = { (id: String) in
            DeadLetterDraft(failedTokens: ["bb"], reason: "Unregistered \(id)", status: 410, attempts: 2,
                            failedAtMillis: 1_700_000_000_000, worker: "w1")
        }
        let done = [
            CompletedMessage(seq: claimed[0].seq, records: [], deadLetters: [draft("d1")], notifications: 1),
            CompletedMessage(seq: claimed[1].seq, records: [.feedback(Array(#"{"f":2}"#.utf8))], deadLetters: [draft("d2")],
                             notifications: 1),
            CompletedMessage(seq: claimed[2].seq, records: [], notifications: 1),
        ]
        // Recovery took the second element before the acknowledgement.
        try await connection.execute(["HDEL", keys.processing(worker: "w1"), String(claimed[1].seq)])
        let acknowledged = try await worker.acknowledge(done, filteredCap: 10)
        XCTAssertEqual(acknowledged, 2)
        let again = try await worker.acknowledge(done, filteredCap: 10)
        XCTAssertEqual(again, 0, "a retry finds nothing to record")
        let dead = try await connection.strings(keys.deadLetters).map(jsonObject)
        XCTAssertEqual(dead.count, 1)
        XCTAssertEqual(dead.first?["reason"] as? String, "Unregistered d1")
        XCTAssertEqual(dead.first?["status"] as? Int, 410)
        XCTAssertEqual(dead.first?["attempts"] as? Int, 2)
        XCTAssertEqual(dead.first?["worker"] as? String, "w1")
        let message = dead.first?["message"] as? [String: Any]
        XCTAssertEqual(message?["id"] as? String, "d1")
        XCTAssertEqual(message?["tokens"] as? [String], ["bb"], "the failed tokens replace the element's")
        XCTAssertEqual((message?["payload"] as? [String: Any])?["x"] as? Int, 1)
        try await assertEqual(try await connection.strings(keys.feedback), [], "the recovered message's records are its new holder's")
        try await assertEqual(try await connection.execute(["EXISTS", keys.processing(worker: "w1")]).integer, 0)
    }

    func testPlainDeliveriesAreDeletedWithoutTheScriptAndCountedOnce() async throws {
        // More than one HDEL's worth of plain deliveries, beside one with a record: all in one acknowledgement.
        let count = WorkQueue.fieldsPerCommand + 200
        try await connection.lpush(keys.queue, (0..<count).map { "p\($0)" })
        let worker = queue("w1")
        var claimed: [ClaimedElement] = []
        while claimed.count < count {
            claimed += try await worker.claim(maxCount: 1000, maxBytes: 1 << 20, allowIsolated: false).elements
        }
        var done = claimed.dropFirst().map { CompletedMessage(seq: $0.seq, records: [], notifications: 1) }
        done.append(CompletedMessage(seq: claimed[0].seq, records: [.deadLetter(Array("{\"d\":0}".utf8))], notifications: 1))
        let acknowledged = try await worker.acknowledge(done, filteredCap: 10)
        XCTAssertEqual(acknowledged, count)
        let again = try await worker.acknowledge(done, filteredCap: 10)
        XCTAssertEqual(again, 0, "a retry finds nothing left to delete or record")
        try await assertEqual(try await connection.strings(keys.deadLetters), ["{\"d\":0}"])
        try await assertEqual(try await connection.execute(["EXISTS", keys.processing(worker: "w1")]).integer, 0)
    }

    func testFilteredAuditListIsCapped() async throws {
        try await connection.lpush(keys.queue, (0..<5).map { "m\($0)" })
        let worker = queue("w1")
        let claimed = try await worker.claim(maxCount: 10, maxBytes: 1000, allowIsolated: false).elements
        try await worker.acknowledge(claimed.map {
            CompletedMessage(seq: $0.seq, records: [.filtered($0.raw)], notifications: 1)
        }, filteredCap: 3)
        try await assertEqual(try await connection.strings(keys.filtered), ["m4", "m3", "m2"], "the newest entries are kept")
    }

    func testADeadWorkersClaimsReturnInChunksOldestConsumedFirst() async throws {
        let total = WorkQueue.recoveryChunk * 2 + 500
        try await connection.lpush(keys.queue, (0..<total).map { "e\($0)" })
        let dead = queue("dead")
        try await dead.beat(ttlMillis: 1000, info: "{}")
        _ = try await claim(dead, total)
        try await connection.lpush(keys.queue, ["later"])
        try await connection.execute(["DEL", keys.heartbeat(worker: "dead")])  // it died
        let rescuer = queue("rescuer")
        let recovery = try await rescuer.recover(worker: "dead", onlyIfDead: true, countDeath: true)
        XCTAssertEqual(recovery.returned, total)
        // After one death they count 1: claimed in batches again (isolation starts at max_deliveries - 1 = 2).
        try await assertEqual(try await connection.claimedCount(keys.processing(worker: "dead")), 0)
        let order = try await claim(rescuer, 1000) + claim(rescuer, 1000) + claim(rescuer, 1000) + claim(rescuer, 1000)
        XCTAssertEqual(order, (0..<total).map { "e\($0)" } + ["later"], "returned work is consumed first, oldest first")
        let registered = try await connection.execute(["ZSCORE", keys.workers, "dead"])
        XCTAssertEqual(registered, .null, "a recovered worker leaves the registry")
    }

    /// Issue 17: recovery is linear in what it moves. 100,000 claims of a dead worker come back in 100 script
    /// calls over one read of the hash's fields (the old script read and sorted every field for each chunk of
    /// 1,000: 100 HKEYS of a hash of up to 100,000), the oldest consumed first.
    func testOneHundredThousandClaimsOfADeadWorkerReturnWithOneReadOfTheHash() async throws {
        let total = 100_000
        for start in stride(from: 0, to: total, by: 10_000) {
            try await connection.lpush(keys.queue, (start..<start + 10_000).map { "e\($0)" })
        }
        let dead = queue("dead")
        var claimed = 0
        while claimed < total { claimed += try await claim(dead, 1000).count }
        _ = try await connection.execute(["CONFIG", "RESETSTAT"])
        let rescuer = queue("rescuer")
        let recovery = try await rescuer.recover(worker: "dead", onlyIfDead: true, countDeath: true)
        XCTAssertEqual(recovery.returned, total)
        let stats = try await connection.execute(["INFO", "commandstats"]).string ?? ""
        let hkeys = stats.split(whereSeparator: \.isNewline).first { $0.hasPrefix("cmdstat_hkeys:") }
        XCTAssertTrue(hkeys?.hasPrefix("cmdstat_hkeys:calls=1,") == true, "the hash's fields are read once: \(hkeys ?? "none")")
        let evalsha = stats.split(whereSeparator: \.isNewline).first { $0.hasPrefix("cmdstat_evalsha:") }
        printFigure("recovery of \(total) claims, Redis time: \(hkeys ?? ""); \(evalsha ?? "")")
        try await assertEqual(try await connection.length(keys.queue), total)
        let consumingEnd = try await connection.execute(["LRANGE", keys.queue, "-3", "-1"]).array?.compactMap(\.string)
        XCTAssertEqual(consumingEnd, ["e2", "e1", "e0"], "the oldest claims are consumed first")
        let elsewhere = try await connection.execute(["LRANGE", keys.queue, "0", "2"]).array?.compactMap(\.string)
        XCTAssertEqual(elsewhere, ["e99999", "e99998", "e99997"])
    }

    func testALiveWorkersClaimsAreLeftAlone() async throws {
        try await connection.lpush(keys.queue, ["a"])
        let busy = queue("busy")
        try await busy.beat(ttlMillis: 5000, info: "{}")
        _ = try await claim(busy)
        let recovery = try await queue("other").recover(worker: "busy", onlyIfDead: true, countDeath: true)
        XCTAssertTrue(recovery.alive)
        try await assertEqual(try await connection.claimedCount(keys.processing(worker: "busy")), 1)
    }

    func testAMessageWhoseHoldersDiedMaxDeliveriesTimesIsDeadLetteredAsPoison() async throws {
        let poison = #"{"id":"killer","topic":"t"}"#
        try await connection.lpush(keys.queue, [poison, "innocent"])  // the poison message is the older
        func die(_ holder: String) async throws -> Recovery {
            try await queue("rescuer").recover(worker: holder, onlyIfDead: true, countDeath: true)
        }
        // Two deaths while both are held (claimed together): each now counts 2.
        for death in 1...2 {
            let claim = try await queue("holder\(death)").claim(maxCount: 10, maxBytes: 1 << 20, allowIsolated: true)
            XCTAssertEqual(texts(claim), [poison, "innocent"])
            XCTAssertEqual(claim.elements.map(\.counted), [death > 1, death > 1])
            let recovery = try await die("holder\(death)")
            XCTAssertEqual(recovery.returned, 2)
            XCTAssertEqual(recovery.poisoned, 0)
        }
        // From max_deliveries - 1 deaths on, each is claimed alone, and only with nothing else in flight.
        let blocked = try await queue("holder3").claim(maxCount: 10, maxBytes: 1 << 20, allowIsolated: false)
        XCTAssertTrue(blocked.elements.isEmpty)
        XCTAssertTrue(blocked.blockedByIsolation)
        let alone = try await queue("holder3").claim(maxCount: 10, maxBytes: 1 << 20, allowIsolated: true)
        XCTAssertEqual(texts(alone), [poison])
        XCTAssertTrue(alone.isolated)
        let third = try await die("holder3")
        XCTAssertEqual(third.poisoned, 1, "its third holder died too: quarantined")
        XCTAssertEqual(third.poisonedIDs, ["killer"])
        XCTAssertEqual(third.returned, 0)
        // The innocent message, claimed alone, is delivered; acknowledging it clears its count.
        let survivor = queue("holder4")
        let innocent = try await survivor.claim(maxCount: 10, maxBytes: 1 << 20, allowIsolated: true)
        XCTAssertEqual(texts(innocent), ["innocent"])
        XCTAssertTrue(innocent.isolated)
        try await survivor.acknowledge([CompletedMessage(seq: innocent.elements[0].seq, counted: true, records: [], notifications: 1)],
                                       filteredCap: 10)

        let dead = try await connection.strings(keys.deadLetters).map(jsonObject)
        XCTAssertEqual(dead.count, 1)
        XCTAssertEqual(dead.first?["reason"] as? String, "PoisonMessage")
        XCTAssertEqual(dead.first?["raw"] as? String, poison, "kept byte for byte, never parsed")
        XCTAssertTrue(dead.first?["message"] is NSNull)
        XCTAssertEqual(dead.first?["worker"] as? String, "holder3")
        XCTAssertEqual(dead.first?["deliveries"] as? Int, 3)
        try await assertEqual(try await connection.length(keys.queue), 0)
        try await assertEqual(try await connection.execute(["HLEN", keys.deliveries]).integer, 0, "no count is left behind")
    }

    func testAGracefulReturnIsNotCountedAsADeath() async throws {
        try await connection.lpush(keys.queue, ["m"])
        for round in 0..<5 {
            let worker = queue("polite\(round)")
            let claimed = try await claim(worker, 10)
            XCTAssertEqual(claimed, ["m"])
            try await worker.returnOwnClaims()
        }
        try await assertEqual(try await connection.execute(["HLEN", keys.deliveries]).integer, 0)
    }

    func testClaimsInTheListFormOfEarlierVersionsAreMigrated() async throws {
        // What the previous version left: a processing list with the oldest claim at its tail.
        try await connection.execute(["LPUSH", keys.processing(worker: "old"), "o1", "o2", "o3"])
        try await connection.lpush(keys.queue, ["new"])
        let worker = queue("upgraded")
        try await assertEqual(try await worker.legacyProcessingOwners(), ["old"])
        let recovery = try await worker.recover(worker: "old", onlyIfDead: true, countDeath: false)
        XCTAssertEqual(recovery.returned, 3)
        try await assertEqual(try await claim(worker), ["o1", "o2", "o3", "new"], "nothing lost, oldest first")
        let type = try await connection.execute(["TYPE", keys.processing(worker: "upgraded")]).string
        XCTAssertEqual(type, "hash")
        try await assertEqual(try await worker.legacyProcessingOwners(), [])
    }

    func testSilentWorkersComeFromTheRegistry() async throws {
        let quiet = queue("quiet")
        try await quiet.beat(ttlMillis: 1000, info: "{}")
        let chatty = queue("chatty")
        try await chatty.beat(ttlMillis: 1000, info: "{}")
        try await Task.sleep(for: .milliseconds(300))
        try await chatty.beat(ttlMillis: 1000, info: "{}")
        try await assertEqual(try await chatty.silentWorkers(olderThanMillis: 200), ["quiet"])
        try await quiet.clearHeartbeat()
        try await assertEqual(try await chatty.silentWorkers(olderThanMillis: 200), [], "a stopped worker leaves the registry")
    }

    func testScriptsAreLoadedOnceAndReloadedAfterRedisLosesThem() async throws {
        try await connection.lpush(keys.queue, ["a", "b", "c"])
        let worker = queue("w1")
        _ = try await claim(worker, 1)
        _ = try await claim(worker, 1)
        try await assertEqual(try await connection.calls(of: "eval"), 1, "the script text is sent once, not with every call")
        try await connection.execute(["SCRIPT", "FLUSH"])
        try await assertEqual(try await claim(worker, 1), ["c"], "NOSCRIPT is answered by sending the script itself")
        try await assertEqual(try await claim(worker, 1), [])
        try await assertEqual(try await connection.calls(of: "eval"), 2, "once more, after Redis had lost it")
    }

    /// Claims taken up again after a lost claim reply keep their death count, so acknowledging them clears
    /// it (otherwise later copies of the same bytes would be claimed alone, or quarantined too early).
    func testClaimsReadBackFromTheProcessingHashKeepTheirDeathCount() async throws {
        try await connection.lpush(keys.queue, ["survivor", "fresh"])
        let digest = try await connection.execute(["EVAL", "return redis.sha1hex(ARGV[1])", "0", "survivor"]).string ?? ""
        try await connection.execute(["HSET", keys.deliveries, digest, "1"])
        let worker = queue("w1")
        let claimed = try await worker.claim(maxCount: 10, maxBytes: 1 << 20, allowIsolated: true)
        XCTAssertEqual(claimed.elements.map(\.counted), [true, false])
        let readBack = try await worker.claimedElements(claimed.elements.map(\.seq))
        XCTAssertEqual(readBack, claimed.elements, "the same elements, counted as the claim counted them")
        try await worker.acknowledge(readBack.map { CompletedMessage(seq: $0.seq, counted: $0.counted, records: [], notifications: 1) },
                                     filteredCap: 10)
        try await assertEqual(try await connection.execute(["HLEN", keys.deliveries]).integer, 0)
    }

    /// A chunked push cut off part-way resumes where it stopped and pushes nothing twice: a chunk whose reply
    /// was lost is recognised by the progress it already advanced, and a run started again continues from it.
    func testAResumablePushNeverPushesAnElementTwice() async throws {
        let pusher = ResumablePush(connection: connection)
        let elements = (0..<2500).map { Array("e\($0)".utf8) }
        // An earlier run of the same id got 1,000 on the list, then died (its progress says so).
        try await connection.lpush(keys.queue, (0..<1000).map { "e\($0)" })
        try await connection.execute(["SET", keys.pushProgress(runID: "r1"), "1000"])
        let total = try await pusher.push(elements, onto: keys.queue, keys: keys, runID: "r1")
        XCTAssertEqual(total, 2500)
        let listed = try await connection.strings(keys.queue)
        XCTAssertEqual(listed.count, 2500)
        XCTAssertEqual(Set(listed).count, 2500, "each element once")
        XCTAssertEqual(listed.last, "e0", "in order: the first pushed is consumed first")
        // The same run again (a retry after a lost reply, or the command run twice): nothing more.
        let again = try await pusher.push(elements, onto: keys.queue, keys: keys, runID: "r1")
        XCTAssertEqual(again, 2500)
        try await assertEqual(try await connection.length(keys.queue), 2500)
        // A chunk sent with a stale offset (its first attempt's reply was lost) pushes nothing.
        let stale = try await connection.execute(bytes: [Array("EVAL".utf8), Array(ResumablePush.script.source.utf8), Array("2".utf8),
                                                         Array(keys.queue.utf8), Array(keys.pushProgress(runID: "r1").utf8),
                                                         Array("1000".utf8), Array("60".utf8), Array("dup".utf8)])
        XCTAssertEqual(stale.integer, 2500)
        try await assertEqual(try await connection.length(keys.queue), 2500)
        try await assertEqual(try await connection.execute(["TTL", keys.pushProgress(runID: "r1")]).integer.map { $0 > 0 }, true,
                              "progress expires")
    }
}
