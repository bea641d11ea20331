import Collector
import PushCore
import TestSupport
import XCTest

final class WorkQueueTests: XCTestCase {
    var redis: RedisServer!
    var connection: RedisConnection!
    let keys = RedisKeys()

    override func setUp() async throws {
        redis = try RedisServer()
        connection = RedisConnection(url: redis.url, name: "test")
    }

    override func tearDown() async throws {
        await connection.close()
        redis.kill()
    }

    private func queue(_ worker: String) -> WorkQueue {
        WorkQueue(connection: RedisConnection(url: redis.url, name: worker), keys: keys, workerID: worker)
    }

    func testClaimTakesTheOldestFirstAndMovesThemAtomically() async throws {
        try await connection.lpush(keys.queue, ["a", "b", "c", "d"])  // producers LPUSH: "a" is the oldest
        let worker = queue("w1")
        let claimed = try await worker.claim(upTo: 3)
        XCTAssertEqual(claimed.map { String(decoding: $0, as: UTF8.self) }, ["a", "b", "c"])
        let left = try await connection.strings(keys.queue)
        XCTAssertEqual(left, ["d"])
        let processing = try await connection.strings(keys.processing(worker: "w1"))
        XCTAssertEqual(Set(processing), ["a", "b", "c"])
        XCTAssertEqual(processing.last, "a", "the oldest claim sits at the tail, where acknowledgement looks first")
        let none = try await worker.claim(upTo: 10)
        XCTAssertEqual(none.map { String(decoding: $0, as: UTF8.self) }, ["d"])
        let nothing = try await worker.claim(upTo: 10)
        XCTAssertTrue(nothing.isEmpty)
    }

    func testBlockingClaimWakesOnTheFirstMessage() async throws {
        let worker = queue("w1")
        let empty = try await worker.waitAndClaimOne(timeoutSeconds: 0.1)
        XCTAssertNil(empty)
        try await connection.lpush(keys.queue, ["x"])
        let one = try await worker.waitAndClaimOne(timeoutSeconds: 1)
        XCTAssertEqual(one.map { String(decoding: $0, as: UTF8.self) }, "x")
        let processing = try await connection.strings(keys.processing(worker: "w1"))
        XCTAssertEqual(processing, ["x"])
    }

    func testAcknowledgementWritesRecordsAndRemovesTheClaimExactlyOnce() async throws {
        try await connection.lpush(keys.queue, ["m1", "m2"])
        let worker = queue("w1")
        _ = try await worker.claim(upTo: 10)
        let done = [
            CompletedMessage(raw: Array("m1".utf8), records: [.deadLetter(Array("{\"d\":1}".utf8)), .feedback(Array("{\"f\":1}".utf8))], notifications: 1),
            CompletedMessage(raw: Array("m2".utf8), records: [.filtered(Array("{\"a\":1}".utf8))], notifications: 1),
        ]
        let acknowledged = try await worker.acknowledge(done, filteredCap: 10)
        XCTAssertEqual(acknowledged, 2)
        // A retry after a lost reply must not record anything twice.
        let again = try await worker.acknowledge(done, filteredCap: 10)
        XCTAssertEqual(again, 0)
        let dlq = try await connection.strings(keys.deadLetters)
        let feedback = try await connection.strings(keys.feedback)
        let filtered = try await connection.strings(keys.filtered)
        let processing = try await connection.length(keys.processing(worker: "w1"))
        XCTAssertEqual(dlq, ["{\"d\":1}"])
        XCTAssertEqual(feedback, ["{\"f\":1}"])
        XCTAssertEqual(filtered, ["{\"a\":1}"])
        XCTAssertEqual(processing, 0)
    }

    func testFilteredAuditListIsCapped() async throws {
        let raws = (0..<5).map { "m\($0)" }
        try await connection.lpush(keys.queue, raws)
        let worker = queue("w1")
        _ = try await worker.claim(upTo: 10)
        try await worker.acknowledge(raws.map { CompletedMessage(raw: Array($0.utf8), records: [.filtered(Array($0.utf8))], notifications: 1) },
                                     filteredCap: 3)
        let filtered = try await connection.strings(keys.filtered)
        XCTAssertEqual(filtered, ["m4", "m3", "m2"], "the newest entries are kept")
    }

    func testDeadWorkersClaimsReturnToTheQueueToBeConsumedNext() async throws {
        try await connection.lpush(keys.queue, ["a", "b", "c"])
        let dead = queue("dead")
        _ = try await dead.claim(upTo: 2)  // a, b claimed; the worker then "dies" without a heartbeat
        try await connection.lpush(keys.queue, ["d"])
        let live = queue("live")
        try await live.beat(ttlMillis: 5000, info: "{}")
        let recovered = try await Heartbeat(queue: live, ttlMillis: 5000, logger: .init(label: "t")).recoverDeadWorkers()
        XCTAssertEqual(recovered, 2)
        let processing = try await connection.length(keys.processing(worker: "dead"))
        XCTAssertEqual(processing, 0)
        let order = try await live.claim(upTo: 10).map { String(decoding: $0, as: UTF8.self) }
        XCTAssertEqual(order, ["a", "b", "c", "d"], "returned work is consumed first, oldest first")
    }

    func testLiveWorkersClaimsAreLeftAlone() async throws {
        try await connection.lpush(keys.queue, ["a"])
        let busy = queue("busy")
        try await busy.beat(ttlMillis: 5000, info: "{}")
        _ = try await busy.claim(upTo: 1)
        let other = queue("other")
        let recovered = try await Heartbeat(queue: other, ttlMillis: 5000, logger: .init(label: "t")).recoverDeadWorkers()
        XCTAssertEqual(recovered, 0)
        let processing = try await connection.length(keys.processing(worker: "busy"))
        XCTAssertEqual(processing, 1)
    }
}
