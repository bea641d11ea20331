import XCTest
@testable import PushCore

/// Every dead letter is built by `DeadLetterEntry`; the records are byte for byte those the three writers
/// (collector, acknowledger, recovery script) made before they shared it.
final class DeadLetterEntryTests: XCTestCase {
    func testAFailedMessageKeepsItsOwnMembersAndOnlyTheFailedTokens() {
        let element = Array(#"{"id":"m1","topic":"t","tokens":["aa","bb"],"alert":"hi"}"#.utf8)
        let record = DeadLetterEntry(failedTokens: ["bb"], reason: "Unregistered", status: 410, attempts: 2,
                                     failedAtMillis: 1_700_000_000_123, worker: "w-1").record(element: element)
        XCTAssertEqual(String(decoding: record, as: UTF8.self),
                       #"{"attempts":2,"failed_at":1700000000123,"message":{"alert":"hi","id":"m1","tokens":["bb"],"topic":"t"},"# +
                       #""reason":"Unregistered","status":410,"worker":"w-1"}"#)
    }

    func testAnElementThatDoesNotParseIsKeptAsRawTextAndBase64() {
        let element: [UInt8] = Array(#"{"id":"x"#.utf8) + [0xFF]
        let record = DeadLetterEntry(failedTokens: nil, reason: "Malformed: not JSON", status: nil, attempts: 0,
                                     failedAtMillis: 5, worker: "w").record(element: element)
        XCTAssertEqual(String(decoding: record, as: UTF8.self),
                       #"{"attempts":0,"failed_at":5,"message":null,"raw":"{\"id\":\"x\#u{FFFD}","raw_base64":"eyJpZCI6Inj/","# +
                       #""reason":"Malformed: not JSON","status":null,"worker":"w"}"#)
    }

    /// The recovery script's record, as its Lua wrote it before: members in key order, `deliveries` included.
    func testThePoisonFramingAroundTheRawMembersIsTheRecordTheScriptWrote() {
        let entry = DeadLetterEntry(failedTokens: nil, reason: "PoisonMessage", status: nil, attempts: 0,
                                    failedAtMillis: 1_700_000_000_000, worker: "host-1:42", deliveries: 3)
        let framing = entry.framingAroundRaw()
        let raw = #""raw":"boom""#
        XCTAssertEqual(String(decoding: framing.before, as: UTF8.self) + raw + String(decoding: framing.after, as: UTF8.self),
                       #"{"attempts":0,"deliveries":3,"failed_at":1700000000000,"message":null,"raw":"boom","# +
                       #""reason":"PoisonMessage","status":null,"worker":"host-1:42"}"#)
        // And it is what `record(element:)` makes of an element that does not parse, but for `deliveries`.
        var plain = entry
        plain.deliveries = nil
        let whole = plain.record(element: Array("boom".utf8))
        let parts = plain.framingAroundRaw()
        XCTAssertEqual(parts.before + Array(raw.utf8) + parts.after, whole)
    }
}
