import Foundation
import PushCore
import QueueProtocol
import RedisClient
import TestSupport
import XCTest

/// Issue 32: a poison dead letter is written by the recovery script, yet it must read like every other dead
/// letter (docs/redis-keys.md, docs/security.md): `raw` as text, plus `raw_base64` when the element is not valid
/// UTF-8, so the tools parse it and a replay or a person gets every byte back.
final class PoisonDeadLetterTests: RedisTestCase {
    private var opened: [RedisConnection] = []

    override func tearDown() async throws {
        for connection in opened { await connection.close() }
        try await super.tearDown()
    }

    /// Puts `element` in the queue and has three holders of it die: its dead letter, as `push:dlq` holds it.
    private func poisoned(_ element: [UInt8]) async throws -> [UInt8] {
        _ = try await connection.execute(bytes: [Array("LPUSH".utf8), Array(keys.queue.utf8), element])
        for death in 1...3 {
            let holder = "holder\(death)-\(UUID().uuidString.prefix(6))"
            let worker = RedisConnection(url: redis.url, name: holder)
            opened.append(worker)
            let queue = WorkQueue(connection: worker, keys: keys, workerID: holder, maxDeliveries: 3)
            let claim = try await queue.claim(maxCount: 10, maxBytes: 1 << 20, allowIsolated: true)
            XCTAssertEqual(claim.elements.map(\.raw), [element], "death \(death)")
            let recovery = try await queue.recover(worker: holder, onlyIfDead: false, countDeath: true)
            XCTAssertEqual(recovery.poisoned, death == 3 ? 1 : 0, "death \(death)")
        }
        let entries = try await connection.execute(["LRANGE", keys.deadLetters, "0", "-1"]).array ?? []
        XCTAssertEqual(entries.count, 1)
        return entries.first?.bytes ?? []
    }

    /// The dead letter, read the way the tools read it (the strict parser, at their depth).
    private func parsed(_ letter: [UInt8]) throws -> JSONValue {
        try JSONParser.parse(letter, maxDepth: JSONParser.defaultMaxDepth + 2)
    }

    func testANonUTF8ElementThatGoesPoisonIsReadableAndKeepsEveryByte() async throws {
        // Not JSON either: `{"id":"x` then bytes no UTF-8 decoder accepts (a lone continuation byte, a 0xFF,
        // a truncated three-byte sequence), then ASCII again.
        let element: [UInt8] = Array(#"{"id":"x"#.utf8) + [0x80, 0xFF, 0xE2, 0x82] + Array(#"","topic":"t"}"#.utf8)
        let letter = try await poisoned(element)
        let record = try parsed(letter)
        XCTAssertEqual(record["reason"]?.stringValue, "PoisonMessage")
        XCTAssertEqual(record["deliveries"]?.exactInteger, 3)
        XCTAssertEqual(record["attempts"]?.exactInteger, 0)
        XCTAssertEqual(record["message"], .null)
        XCTAssertEqual(record["raw"]?.stringValue, String(decoding: element, as: UTF8.self),
                       "the text reads as any other dead letter's: each bad sequence one U+FFFD")
        XCTAssertEqual(record["raw_base64"]?.stringValue, Data(element).base64EncodedString(), "every byte kept")
        let expected = try parsed(OutcomeRecords.deadLetter(raw: element, failedTokens: nil, reason: "PoisonMessage", status: nil,
                                                           attempts: 0, failedAtMillis: 0, worker: "w"))
        XCTAssertEqual(record["raw"], expected["raw"])
        XCTAssertEqual(record["raw_base64"], expected["raw_base64"])
    }

    /// Each way a byte sequence can fail to be UTF-8 (Unicode's table 3-7), and base64's three tails: `raw` is
    /// what Swift's decoder makes of the bytes (one U+FFFD per maximal bad subpart), `raw_base64` the bytes.
    func testEveryKindOfBadSequenceReadsAsSwiftDecodesIt() async throws {
        let cases: [[UInt8]] = [
            [0xC0, 0xAF],              // overlong
            [0xE0, 0x80, 0xAF],        // overlong three-byte
            [0xED, 0xA0, 0x80],        // a surrogate
            [0xF4, 0x90, 0x80, 0x80],  // above U+10FFFF
            [0xF0, 0x9F, 0x98],        // a four-byte sequence cut short
            [0xF0, 0x9F, 0x98, 0x80, 0xF5],  // a valid emoji, then a byte that never starts one
            [0xC3],                    // cut short at the very end
            [0xE2, 0x82, 0x41],        // cut short before ASCII
        ]
        for (index, bad) in cases.enumerated() {
            let element = Array("{\"id\":\"case\(index)\"".utf8) + bad + Array("ab".utf8).prefix(index % 3)
            try await connection.execute(["DEL", keys.deadLetters])
            let record = try parsed(try await poisoned(element))
            XCTAssertEqual(record["raw"]?.stringValue, String(decoding: element, as: UTF8.self), "case \(index): \(bad)")
            XCTAssertEqual(record["raw_base64"]?.stringValue, Data(element).base64EncodedString(), "case \(index)")
        }
    }

    func testAValidUTF8ElementHasItsTextOnly() async throws {
        let element = Array(#"{"id":"ü-✓-😀","topic":"t","payload":{"a":"/\\\""}}"#.utf8)
        let record = try parsed(try await poisoned(element))
        XCTAssertEqual(record["raw"]?.stringValue.map { Array($0.utf8) }, element, "byte for byte")
        XCTAssertNil(record["raw_base64"], "only when the text cannot hold the bytes")
    }
}
