import Foundation
import PushCore
import QueueProtocol
import RedisClient
import TestSupport
import XCTest

/// Issue 32: poison counts belong to each claimed entry, not to the element's bytes. A producer that retries an
/// LPUSH puts byte-identical copies in the queue; each copy is a suspect only if that copy's holders died.
final class PoisonCountTests: RedisTestCase {
    private var opened: [RedisConnection] = []

    override func tearDown() async throws {
        for connection in opened { await connection.close() }
        try await super.tearDown()
    }

    private func queue(_ worker: String) -> WorkQueue {
        let connection = RedisConnection(url: redis.url, name: worker)
        opened.append(connection)
        return WorkQueue(connection: connection, keys: keys, workerID: worker, maxDeliveries: 3)
    }

    private func died(_ holder: String) async throws -> Recovery {
        try await queue("rescuer").recover(worker: holder, onlyIfDead: true, countDeath: true)
    }

    private func texts(_ claim: Claim) -> [String] { claim.elements.map { String(decoding: $0.raw, as: UTF8.self) } }

    func testThreeCopiesHeldByOneWorkerThatDiedAreOneDeathEachNotThree() async throws {
        let element = #"{"id":"retried","topic":"t","tokens":["00"],"payload":{}}"#
        try await connection.lpush(keys.queue, [element, element, element])  // the producer's LPUSH, retried twice
        let first = try await queue("first").claim(maxCount: 10, maxBytes: 1 << 20, allowIsolated: true)
        XCTAssertEqual(texts(first), [element, element, element])
        let recovery = try await died("first")
        XCTAssertEqual(recovery.poisoned, 0, "one death for each copy: none is poison")
        XCTAssertEqual(recovery.returned, 3)
        try await assertEqual(try await connection.length(keys.deadLetters), 0)

        // Each copy has one death: counted, but under max_deliveries - 1, so claimed together as before.
        let second = queue("second")
        let again = try await second.claim(maxCount: 10, maxBytes: 1 << 20, allowIsolated: true)
        XCTAssertEqual(texts(again), [element, element, element])
        XCTAssertEqual(again.elements.map(\.counted), [true, true, true])
        XCTAssertFalse(again.isolated)
        // Acknowledging one copy leaves the others' counts; acknowledging all leaves none.
        try await second.acknowledge([CompletedMessage(seq: again.elements[0].seq, counted: true, records: [], notifications: 1)],
                                     filteredCap: 10)
        let readBack = try await second.claimedElements(again.elements.dropFirst().map(\.seq))
        XCTAssertEqual(readBack.map(\.counted), [true, true], "the other copies are still suspects of their own")
        try await second.acknowledge(readBack.map { CompletedMessage(seq: $0.seq, counted: $0.counted, records: [], notifications: 1) },
                                     filteredCap: 10)
        try await assertEqual(try await connection.execute(["HLEN", keys.deliveries]).integer, 0, "no count is left behind")
    }

    func testACopyNobodyHeldWhenAWorkerDiedIsNoSuspect() async throws {
        let element = #"{"id":"twice","topic":"t"}"#
        try await connection.lpush(keys.queue, [element])
        _ = try await queue("holder").claim(maxCount: 10, maxBytes: 1 << 20, allowIsolated: true)
        try await connection.lpush(keys.queue, [element])  // the producer's retry, while the first copy is held
        _ = try await died("holder")
        // The returned copy is consumed first (RPUSH), then the retry that nobody held.
        let claim = try await queue("next").claim(maxCount: 10, maxBytes: 1 << 20, allowIsolated: true)
        XCTAssertEqual(texts(claim), [element, element])
        XCTAssertEqual(claim.elements.map(\.counted), [true, false], "only the copy whose holder died is a suspect")
    }

    func testACopyWhoseOwnHoldersDiedMaxDeliveriesTimesIsStillPoison() async throws {
        let poison = #"{"id":"killer","topic":"t"}"#
        try await connection.lpush(keys.queue, [poison, poison, "innocent"])
        // Two deaths with every copy held: each copy counts 2 (not 4).
        for death in 1...2 {
            let claim = try await queue("holder\(death)").claim(maxCount: 10, maxBytes: 1 << 20, allowIsolated: true)
            XCTAssertEqual(texts(claim), [poison, poison, "innocent"])
            let recovery = try await died("holder\(death)")
            XCTAssertEqual(recovery.poisoned, 0, "death \(death)")
            XCTAssertEqual(recovery.returned, 3)
        }
        // Now each copy is claimed alone; the first one kills its holder a third time: quarantined, alone.
        let alone = try await queue("holder3").claim(maxCount: 10, maxBytes: 1 << 20, allowIsolated: true)
        XCTAssertEqual(texts(alone), [poison])
        XCTAssertTrue(alone.isolated)
        let third = try await died("holder3")
        XCTAssertEqual(third.poisoned, 1)
        XCTAssertEqual(third.poisonedIDs, ["killer"])
        // The other copy has its own two deaths: still claimed alone, not quarantined with the first.
        let other = try await queue("holder4").claim(maxCount: 10, maxBytes: 1 << 20, allowIsolated: true)
        XCTAssertEqual(texts(other), [poison])
        XCTAssertTrue(other.isolated)
        let fourth = try await died("holder4")
        XCTAssertEqual(fourth.poisoned, 1)
        let dead = try await connection.strings(keys.deadLetters).map(jsonObject)
        XCTAssertEqual(dead.map { $0["reason"] as? String }, ["PoisonMessage", "PoisonMessage"])
        XCTAssertEqual(dead.map { $0["deliveries"] as? Int }, [3, 3])
        let innocent = try await queue("holder5").claim(maxCount: 10, maxBytes: 1 << 20, allowIsolated: true)
        XCTAssertEqual(texts(innocent), ["innocent"])
        XCTAssertTrue(innocent.isolated)
    }

    func testAGracefulReturnKeepsEachCopysCount() async throws {
        let element = #"{"id":"kept","topic":"t"}"#
        try await connection.lpush(keys.queue, [element, element])
        _ = try await queue("dying").claim(maxCount: 1, maxBytes: 1 << 20, allowIsolated: true)
        _ = try await died("dying")  // the first copy: one death
        let polite = queue("polite")
        let claim = try await polite.claim(maxCount: 10, maxBytes: 1 << 20, allowIsolated: true)
        XCTAssertEqual(claim.elements.map(\.counted), [true, false])
        try await polite.returnOwnClaims()  // not a death: the counted copy keeps its one, the other stays clean
        let after = try await queue("after").claim(maxCount: 10, maxBytes: 1 << 20, allowIsolated: true)
        XCTAssertEqual(after.elements.map(\.counted), [true, false])
    }
}
