import Foundation
import PushCore
import QueueProtocol
import RedisClient
import TestSupport
import XCTest

/// The recovery script writes a poison message's dead letter from `DeadLetterEntry.framingAroundRaw`: byte for
/// byte the record `DeadLetterEntry` makes of an element it cannot parse, `deliveries` included.
final class PoisonRecordBytesTests: RedisTestCase {
    func testThePoisonDeadLetterIsTheSharedWritersRecordByteForByte() async throws {
        let element: [UInt8] = Array(#"{"id":"p1","tokens":["aa"]"#.utf8) + [0xC3]  // cut short: not JSON
        _ = try await connection.execute(bytes: [Array("LPUSH".utf8), Array(keys.queue.utf8), element])
        var holders: [RedisConnection] = []
        var lastHolder = ""
        for death in 1...3 {
            lastHolder = "holder/\(death)-\(UUID().uuidString.prefix(6))"  // a slash: JSON escaping must agree too
            let worker = RedisConnection(url: redis.url, name: lastHolder)
            holders.append(worker)
            let queue = WorkQueue(connection: worker, keys: keys, workerID: lastHolder, maxDeliveries: 3)
            _ = try await queue.claim(maxCount: 10, maxBytes: 1 << 20, allowIsolated: true)
            _ = try await queue.recover(worker: lastHolder, onlyIfDead: false, countDeath: true)
        }
        for holder in holders { await holder.close() }
        let letter = try await connection.execute(["LINDEX", keys.deadLetters, "0"]).bytes ?? []
        let failedAt = try XCTUnwrap(JSONParser.parse(letter, maxDepth: 8)["failed_at"]?.exactInteger)
        let expected = DeadLetterEntry(failedTokens: nil, reason: "PoisonMessage", status: nil, attempts: 0,
                                       failedAtMillis: Int64(failedAt), worker: lastHolder, deliveries: 3)
            .record(element: element)
        XCTAssertEqual(String(decoding: letter, as: UTF8.self), String(decoding: expected, as: UTF8.self))
        XCTAssertEqual(letter, expected)
    }
}
