import APNsProvider
import Foundation
import PushCore
import TestSupport
import XCTest

/// Regression tests for crafted queue elements (issue: one message crashed every worker in turn).
/// Each case must come back as a dead letter whose reason names the field, never as a trap or a hang.
final class HostileInputTests: XCTestCase {
    /// The default provider's message rules are its module's: registered, as the worker registers it.
    override class func setUp() {
        super.setUp()
        _ = APNsModule.provider
    }

    let parser = MessageParser()
    let now: Int64 = 1_800_000_000
    let goodToken = token("a", 1)

    private func parse(_ bytes: [UInt8]) -> ParsedElement { parser.parse(bytes, seq: 1, now: now) }
    private func parse(_ text: String) -> ParsedElement { parse(Array(text.utf8)) }

    private func reason(_ text: String) -> String? { reason(Array(text.utf8)) }
    private func reason(_ bytes: [UInt8]) -> String? {
        if case .invalid(let reason, _) = parse(bytes) { return reason }
        return nil
    }

    /// A message with one field's JSON text replaced.
    private func message(_ field: String, _ json: String) -> String {
        var fields = [
            "id": #""m-1""#, "topic": #""com.example.chat""#, "tokens": #"["\#(goodToken)"]"#,
            "payload": #"{"aps":{"alert":"hi"}}"#,
        ]
        fields[field] = json
        return "{" + fields.sorted { $0.key < $1.key }.map { #""\#($0.key)":\#($0.value)"# }.joined(separator: ",") + "}"
    }

    func testRelativeExpirationThatOverflowsIsADeadLetterNotACrash() {
        // The element that took the fleet down: now + Int64.max trapped.
        XCTAssertEqual(reason(message("expiration", #""+9223372036854775807""#)),
                       "Malformed: expiration \"+9223372036854775807\" is past the largest UNIX time a message can carry (4294967295)")
        XCTAssertEqual(reason(message("expiration", #""+99999999999999999999999""#)),
                       "Malformed: expiration string must be \"+N\" (seconds from now)")
        XCTAssertEqual(reason(message("expiration", #""+-5""#)), "Malformed: expiration string must be \"+N\" (seconds from now)")
    }

    func testExtremeNumbersInEveryNumericField() {
        let extremes = ["9223372036854775807", "9223372036854775808", "-9223372036854775809", "1e308", "-1e308",
                        "1e400", "1e-400", "-0", "0.5", "4294967296", "18446744073709551616", "123456789012345678901234567890"]
        for literal in extremes {
            let priority = reason(message("priority", literal))
            XCTAssertEqual(priority, "Malformed: priority must be 10, 5 or 1", literal)
            let expiration = reason(message("expiration", literal))
            if ["-0", "1e-400"].contains(literal) {
                XCTAssertNil(expiration, "\(literal) is 0: try once")
            } else {
                XCTAssertNotNil(expiration, literal)
                XCTAssertTrue(expiration?.hasPrefix("Malformed: expiration") ?? false, "\(literal): \(expiration ?? "")")
            }
            let enqueued = reason(message("enqueued_at", literal))
            if ["-0", "1e-400", "4294967296"].contains(literal) {
                // -0 and an underflow to 0 are the whole number 0; 2^32 ms is a (very old) time.
                XCTAssertNil(enqueued, literal)
            } else {
                XCTAssertEqual(enqueued, "Malformed: enqueued_at must be UNIX milliseconds (a whole number from 0 to 2^53)", literal)
            }
        }
        XCTAssertNil(reason(message("priority", "10.0")), "a whole number written with a fraction is still 10")
        XCTAssertNil(reason(message("expiration", "4294967295")))
        // Numbers inside the payload are sent exactly as written, never converted.
        guard case .valid(let big, _) = parse(message("payload", #"{"aps":{"alert":"x"},"n":123456789012345678901234567890,"f":1.50}"#)) else {
            return XCTFail("payload numbers are the producer's business")
        }
        XCTAssertEqual(String(decoding: big.payload, as: UTF8.self), #"{"aps":{"alert":"x"},"f":1.50,"n":123456789012345678901234567890}"#)
    }

    func testWrongTypesInEveryField() {
        XCTAssertEqual(reason(message("id", "5")), "Malformed: id is not a string")
        XCTAssertEqual(reason(message("id", "null")), "Malformed: id is not a string")
        XCTAssertEqual(reason(message("topic", "[]")), "Malformed: topic must be a non-empty bundle id")
        XCTAssertEqual(reason(message("tokens", #""abc""#)), "Malformed: tokens is not an array")
        XCTAssertEqual(reason(message("tokens", "[[1]]")), "Malformed: tokens[0] is not a string")
        XCTAssertEqual(reason(message("payload", "[]")), "Malformed: payload is not a JSON object")
        XCTAssertEqual(reason(message("kind", "true")), "Malformed: kind must be \"private\", \"group\" or \"system\"")
        XCTAssertEqual(reason(message("uuid", "{}")), "Malformed: uuid is not a string")
        XCTAssertEqual(reason(message("priority", #""10""#)), "Malformed: priority must be 10, 5 or 1")
        XCTAssertEqual(reason(message("expiration", "true")), "Malformed: expiration must be UNIX seconds or \"+N\"")
        XCTAssertEqual(reason(message("collapse_id", "1")), "Malformed: collapse_id is not a string")
        XCTAssertEqual(reason(message("enqueued_at", #""now""#)),
                       "Malformed: enqueued_at must be UNIX milliseconds (a whole number from 0 to 2^53)")
        XCTAssertNotNil(reason(message("push_type", "1"))?.hasPrefix("Malformed: push_type must be one of"))
    }

    func testHeaderValuesAreVisibleASCIIOnly() {
        XCTAssertEqual(reason(message("collapse_id", #""a\r\napns-priority: 5""#)),
                       "Malformed: collapse_id must be visible ASCII (byte 0xd is not allowed)")
        XCTAssertEqual(reason(message("collapse_id", #""caf\u00e9""#)),
                       "Malformed: collapse_id must be visible ASCII (byte 0xc3 is not allowed)")
        XCTAssertEqual(reason(message("collapse_id", #""a\u0000b""#)),
                       "Malformed: collapse_id must be visible ASCII (byte 0x0 is not allowed)")
        XCTAssertEqual(reason(message("collapse_id", #"" padded""#)), "Malformed: collapse_id must not start or end with a space")
        XCTAssertNil(reason(message("collapse_id", #""chat 42: new""#)), "inner spaces are fine")
        XCTAssertEqual(reason(message("topic", #""com.example\nx""#)),
                       "Malformed: topic must be visible ASCII (byte 0xa is not allowed)")
        XCTAssertEqual(reason(message("topic", #""com.example chat""#)),
                       "Malformed: topic must be visible ASCII (byte 0x20 is not allowed)")
        XCTAssertEqual(reason(message("topic", "\"" + String(repeating: "a", count: 256) + "\"")),
                       "Malformed: topic is 256 bytes, over 255")
        XCTAssertEqual(reason(message("id", #""m\n2026-01-01 critical: forged""#)), "Malformed: id contains a control character")
        XCTAssertEqual(reason(message("id", #""a\u0000""#)), "Malformed: id contains a control character")
        // ASCII ids are checked byte by byte, others scalar by scalar: the same limits on both paths.
        XCTAssertEqual(reason(message("id", #""a\u007f""#)), "Malformed: id contains a control character")
        XCTAssertEqual(reason(message("id", #""é\u0085""#)), "Malformed: id contains a control character")
        XCTAssertNil(reason(message("id", "\"" + String(repeating: "a", count: 128) + "\"")))
        XCTAssertEqual(reason(message("id", "\"" + String(repeating: "a", count: 129) + "\"")), "Malformed: id must be 1..128 characters")
        XCTAssertNil(reason(message("id", "\"" + String(repeating: "é", count: 128) + "\"")), "128 characters, 256 bytes")
        XCTAssertEqual(reason(message("id", "\"" + String(repeating: "é", count: 129) + "\"")), "Malformed: id must be 1..128 characters")
    }

    func testInvalidUTF8AndRandomBytesAreDeadLettersKeptWhole() throws {
        let invalid: [UInt8] = Array(#"{"id":"m","topic":"t","tokens":[""#.utf8) + [0xC3, 0x28] + Array(#""],"payload":{}}"#.utf8)
        XCTAssertEqual(reason(invalid), "Malformed: not JSON (invalid UTF-8 in the string at byte 33)")
        // The dead letter keeps every byte: as text for people, as Base64 for tools.
        let record = OutcomeRecords.deadLetter(raw: invalid, failedTokens: nil, reason: "r", status: nil, attempts: 0,
                                               failedAtMillis: 1, worker: "w")
        let object = jsonObject(record)
        XCTAssertEqual(object["raw_base64"] as? String, Data(invalid).base64EncodedString())
        XCTAssertTrue(object["message"] is NSNull)

        var generator = SeededGenerator(seed: 42)
        for _ in 0..<2000 {
            let length = Int.random(in: 0...300, using: &generator)
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            guard case .invalid(let reason, _) = parse(bytes) else { return XCTFail("random bytes parsed: \(bytes)") }
            XCTAssertTrue(reason.hasPrefix("Malformed: not JSON") || reason.hasPrefix("Malformed: not a JSON object"), reason)
        }
    }

    func testDeepNestingIsRejectedWithoutRecursingIntoIt() {
        let deep = String(repeating: "[", count: 200_000) + String(repeating: "]", count: 200_000)
        XCTAssertEqual(reason(message("payload", #"{"aps":{"alert":"x"},"d":\#(deep)}"#)),
                       "Malformed: not JSON (nested deeper than 64 levels at byte 109)")
        XCTAssertEqual(reason(String(repeating: "{\"a\":", count: 100_000)), "Malformed: not JSON (nested deeper than 64 levels at byte 320)")
        // The dead letter of such an element is written without recursing into it either.
        let record = OutcomeRecords.deadLetter(raw: Array(deep.utf8), failedTokens: nil, reason: "r", status: nil,
                                               attempts: 0, failedAtMillis: 1, worker: "w")
        XCTAssertEqual(jsonObject(record)["raw"] as? String, deep)
    }

    func testHugeElementIsRejectedUnparsed() {
        var limits = MessageLimits()
        limits.maxElementBytes = 1_048_576
        let filler = String(repeating: "x", count: 1_048_576)
        let huge = Array(message("uuid", "\"\(filler)\"").utf8)
        guard case .invalid(let reason, let id) = MessageParser(limits: limits).parse(huge, seq: 1, now: now) else {
            return XCTFail("a 1 MiB element must not be accepted")
        }
        XCTAssertEqual(reason, "Malformed: element is \(huge.count) bytes, over the 1048576-byte limit")
        XCTAssertNil(id, "not parsed, so not even the id is read")
        // Just under the limit it is parsed and judged on its fields.
        let under = Array(message("uuid", "\"" + String(repeating: "x", count: 1_000_000) + "\"").utf8)
        XCTAssertEqual(MessageParser(limits: limits).parse(under, seq: 1, now: now).reason, "Malformed: uuid is 1000000 bytes, over 256")
    }

    func testDuplicateKeysAreRejectedAtEveryLevel() {
        XCTAssertEqual(reason(#"{"id":"a","id":"b","topic":"t","tokens":["\#(goodToken)"],"payload":{}}"#),
                       "Malformed: not JSON (duplicate key \"id\" at byte 10)")
        XCTAssertEqual(reason(message("payload", #"{"aps":{"alert":"x","alert":"y"}}"#))?.hasPrefix("Malformed: not JSON (duplicate key \"alert\""), true)
    }

    func testTokenCountBoundsAndEmptyList() {
        let tenThousand = (0..<10_000).map { token("c", $0) }
        guard case .valid(let message, let rejected) = parse(messageJSON(id: "m", tokens: tenThousand)) else {
            return XCTFail("10,000 tokens is the limit, not over it")
        }
        XCTAssertEqual(message.tokens.count, 10_000)
        XCTAssertEqual(rejected, [])
        XCTAssertEqual(reason(messageJSON(id: "m", tokens: tenThousand + [token("d", 1)])), "Malformed: tokens has 10001 entries, over 10000")
        XCTAssertEqual(reason(messageJSON(id: "m", tokens: [])), "Malformed: tokens is empty")
    }

    func testPayloadOf4096BytesPassesAnd4097IsRejected() throws {
        // {"aps":{"alert":"..."}} is 20 bytes around the text.
        let exact = messageJSON(id: "p", tokens: [goodToken], alert: String(repeating: "x", count: 4076))
        guard case .valid(let message, _) = parse(exact) else { return XCTFail("4,096 bytes is allowed") }
        XCTAssertEqual(message.payload.count, 4096)
        XCTAssertEqual(reason(messageJSON(id: "p", tokens: [goodToken], alert: String(repeating: "x", count: 4077))),
                       "Malformed: payload is 4097 bytes, over the 4096-byte limit for alert")
    }

    func testInvalidMessageKeepsItsIdForTheLogLine() {
        guard case .invalid(_, let id) = parse(message("priority", "7")) else { return XCTFail("priority 7 is invalid") }
        XCTAssertEqual(id, "m-1")
    }

    func testDuplicateIdsAreTwoMessages() {
        // Ids are the producer's; two elements with one id are still two messages, each with its own outcome.
        guard case .valid(let first, _) = parser.parse(Array(message("id", #""same""#).utf8), seq: 1, now: now),
              case .valid(let second, _) = parser.parse(Array(message("id", #""same""#).utf8), seq: 2, now: now)
        else { return XCTFail("both are valid") }
        XCTAssertEqual(first.id, second.id)
        XCTAssertNotEqual(first.seq, second.seq)
    }

    /// Mutations of valid messages (byte flips, cuts, insertions of JSON punctuation): whatever comes out,
    /// an accepted message has only visible-ASCII header values and a payload that is valid JSON within the limit.
    func testMutatedMessagesKeepTheInvariants() throws {
        let seeds = [
            message("collapse_id", #""c-1""#), message("expiration", #""+60""#), message("priority", "5"),
            messageJSON(id: "g", tokens: [token("b", 1), token("b", 2)], kind: "group", uuid: "u-1"),
        ].map { Array($0.utf8) }
        let punctuation = Array(#"{}[]":,\0-+e.9"#.utf8) + [0x00, 0x0A, 0x0D, 0xC3, 0xFF]
        var generator = SeededGenerator(seed: 7)
        var accepted = 0
        for iteration in 0..<20_000 {
            var bytes = seeds[iteration % seeds.count]
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                let position = Int.random(in: 0..<bytes.count, using: &generator)
                switch Int.random(in: 0..<4, using: &generator) {
                case 0: bytes[position] = punctuation.randomElement(using: &generator)!
                case 1: bytes.insert(punctuation.randomElement(using: &generator)!, at: position)
                case 2: bytes.remove(at: position)
                default: bytes[position] ^= UInt8(1) << UInt8.random(in: 0...7, using: &generator)
                }
                if bytes.isEmpty { bytes = [0x7B] }
            }
            guard case .valid(let message, _) = parse(bytes) else { continue }
            accepted += 1
            for header in [message.headers.topic, message.headers.collapseID ?? "x"] {
                XCTAssertTrue(header.utf8.allSatisfy { $0 >= 0x20 && $0 <= 0x7E }, "header value \(header) from \(bytes)")
            }
            XCTAssertNoThrow(try JSONParser.parse(message.payload), "payload from \(bytes)")
            XCTAssertLessThanOrEqual(message.payload.count, 5120)
            XCTAssertFalse(message.tokens.isEmpty)
        }
        XCTAssertGreaterThan(accepted, 100, "mutations that stay valid exercise the accepting paths too")
    }
}

extension ParsedElement {
    var reason: String? {
        if case .invalid(let reason, _) = self { return reason }
        return nil
    }
}

/// A small deterministic generator (SplitMix64), so a failing case can be reproduced from its seed.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
