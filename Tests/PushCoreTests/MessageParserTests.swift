import APNsProvider
import PushCore
import TestSupport
import XCTest

final class MessageParserTests: XCTestCase {
    /// The default provider's message rules are its module's: registered, as the worker registers it.
    override class func setUp() {
        super.setUp()
        _ = APNsModule.provider
    }

    let parser = MessageParser()
    let now: Int64 = 1_800_000_000

    private func parse(_ text: String) -> ParsedElement { parser.parse(Array(text.utf8), seq: 7, now: now) }

    private func valid(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> (PushMessage, [String])? {
        guard case .valid(let message, let rejected) = parse(text) else {
            XCTFail("expected a valid message, got \(parse(text))", file: file, line: line)
            return nil
        }
        return (message, rejected)
    }

    private func reason(_ text: String) -> String? {
        if case .invalid(let reason, _) = parse(text) { return reason }
        return nil
    }

    func testValidMessageGetsSpecDefaults() throws {
        let (message, rejected) = try XCTUnwrap(valid(messageJSON(id: "m1", tokens: [token("A1", 1)])))
        XCTAssertEqual(rejected, [])
        XCTAssertEqual(message.id, "m1")
        XCTAssertEqual(message.seq, 7)
        XCTAssertEqual(message.kind, .private)
        XCTAssertEqual(message.headers.pushType, "alert")
        XCTAssertEqual(message.headers.priority, 10)
        XCTAssertNil(message.headers.expiration, "no expiration given: no apns-expiration header, so Apple stores the push")
        XCTAssertEqual(message.headers.topic, "com.example.chat")
        XCTAssertEqual(message.tokens, [token("a1", 1)], "hex is sent in lower case")
        XCTAssertEqual(String(decoding: message.payload, as: UTF8.self), #"{"aps":{"alert":"hello"}}"#)
    }

    private func element(payload: String) -> String {
        #"{"id":"p","topic":"com.example.chat","tokens":["\#(token("a", 1))"],"payload":\#(payload)}"#
    }

    /// A payload already in canonical form is kept as the producer's bytes; any other is written canonically.
    /// Either way the message carries exactly what the canonical writer makes of the payload's tree.
    func testThePayloadIsAlwaysItsCanonicalFormWhetherKeptOrWritten() throws {
        let canonical = [
            #"{"aps":{"alert":"hello"}}"#,
            #"{}"#,
            #"{"aps":{"alert":{"body":"b","title":"t"},"badge":3,"sound":"default"},"data":{"id":"x-1"}}"#,
            #"{"a":[1,-0.5,2e10,3E-2,true,false,null,[],{}],"b":"q\"uote\\back\nline\ttab\rcr","c":"del\#u{7F}"}"#,
        ]
        let rewritten = [
            #"{ "aps": {"alert": "hello"} }"#,                     // whitespace
            #"{"data":{"id":"x"},"aps":{"alert":"hello"}}"#,        // keys out of order
            #"{"aps":{"alert":"caf\u00e9 \/ \u0041"}}"#,           // escapes the writer does not use
            #"{"aps":{"alert":"你好"}}"#,                            // non-ASCII text
            #"{"k\"ey":1,"a":2}"#,                                  // an escaped key
            #"{"aps":{"alert":"a\u0001b"}}"#,                       // a control character, escaped as the writer does
        ]
        for payload in canonical + rewritten {
            let raw = Array(element(payload: payload).utf8)
            let kept = try JSONParser.parse(raw, keepingCanonical: "payload").kept
            XCTAssertEqual(kept != nil, canonical.contains(payload), "kept as bytes exactly when canonical: \(payload)")
            guard case .valid(let message, _) = parser.parse(raw, seq: 1, now: now) else {
                XCTFail("not valid: \(payload)")
                continue
            }
            let tree = try XCTUnwrap(try JSONParser.parse(Array(payload.utf8)))
            XCTAssertEqual(String(decoding: message.payload, as: UTF8.self),
                           String(decoding: JSONWriter.canonical(tree), as: UTF8.self), payload)
        }
    }

    func testABackgroundPushIsRecognisedInAKeptPayloadAsInAWrittenOne() throws {
        let cases: [(payload: String, type: String)] = [
            (#"{"aps":{"content-available":1}}"#, "background"),
            (#"{"aps":{"content-available":1},"z":{"aps":2}}"#, "background"),
            (#"{"a":1,"aps":{"content-available":1}}"#, "background"),
            (#"{"aps":{"content-available":1,"sound":"x"}}"#, "alert"),
            (#"{"aps":{"badge":1}}"#, "alert"),
            (#"{"aps":1}"#, "alert"),
            (#"{"aps":{}}"#, "alert"),
            (#"{"x":{"aps":{"content-available":1}}}"#, "alert"),
            (#"{"aps": {"content-available": 1}}"#, "background"),  // written, not kept
        ]
        for (payload, type) in cases {
            let (message, _) = try XCTUnwrap(valid(element(payload: payload)))
            XCTAssertEqual(message.headers.pushType, type, payload)
        }
    }

    func testAPayloadNestedToTheLimitIsLeftToTheParserAndItsError() throws {
        let limit = JSONParser.defaultMaxDepth
        // The root is level 1 and the payload level 2: a payload nesting `limit - 1` levels is the deepest allowed.
        let deepest = String(repeating: #"{"a":"#, count: limit - 2) + "{}" + String(repeating: "}", count: limit - 2)
        XCTAssertNotNil(valid(element(payload: deepest)))
        let tooDeep = String(repeating: #"{"a":"#, count: limit - 1) + "{}" + String(repeating: "}", count: limit - 1)
        XCTAssertEqual(reason(element(payload: tooDeep))?.contains("nested deeper than \(limit) levels"), true)
    }

    func testContentAvailableOnlyIsBackgroundWithPriorityFive() throws {
        let text = #"{"id":"b","topic":"t.app","tokens":["\#(token("a", 1))"],"payload":{"aps":{"content-available":1}}}"#
        let (message, _) = try XCTUnwrap(valid(text))
        XCTAssertEqual(message.headers.pushType, "background")
        XCTAssertEqual(message.headers.priority, 5)
        XCTAssertEqual(reason(text.replacingOccurrences(of: #""id":"b""#, with: #""id":"b","priority":10"#)),
                       "Malformed: priority 10 is not allowed for background pushes (Apple requires 5)")
    }

    func testVoipGetsTopicSuffixAndLargerPayloadLimit() throws {
        let big = String(repeating: "x", count: 4500)
        let text = messageJSON(id: "v", tokens: [token("a", 1)], alert: big, extra: ["push_type": "voip"])
        let (message, _) = try XCTUnwrap(valid(text))
        XCTAssertEqual(message.headers.topic, "com.example.chat.voip")
        XCTAssertEqual(message.headers.appTopic, "com.example.chat")
        XCTAssertEqual(reason(messageJSON(id: "a", tokens: [token("a", 1)], alert: big)),
                       "Malformed: payload is 4520 bytes, over the 4096-byte limit for alert")
    }

    func testExpirationForms() throws {
        let relative = try XCTUnwrap(valid(messageJSON(id: "e", tokens: [token("a", 1)], extra: ["expiration": "+60"])))
        XCTAssertEqual(relative.0.headers.expiration, now + 60)
        let absolute = try XCTUnwrap(valid(messageJSON(id: "e", tokens: [token("a", 1)], extra: ["expiration": now + 5])))
        XCTAssertEqual(absolute.0.headers.expiration, now + 5)
        XCTAssertEqual(reason(messageJSON(id: "e", tokens: [token("a", 1)], extra: ["expiration": now - 5])), "Expired")
        XCTAssertEqual(reason(messageJSON(id: "e", tokens: [token("a", 1)], extra: ["expiration": "soon"])),
                       "Malformed: expiration string must be \"+N\" (seconds from now)")
        for text in ["++5", "+-5", "+", "+5s"] {
            XCTAssertEqual(reason(messageJSON(id: "e", tokens: [token("a", 1)], extra: ["expiration": text])),
                           "Malformed: expiration string must be \"+N\" (seconds from now)", text)
        }
    }

    func testBadInputNamesTheFieldAndTheProblem() {
        XCTAssertEqual(reason("not json"), "Malformed: not JSON (unexpected character at byte 1)")
        XCTAssertEqual(reason("[1,2]"), "Malformed: not a JSON object")
        XCTAssertEqual(reason(#"{"topic":"t","tokens":["aa"],"payload":{}}"#), "Malformed: id is missing")
        XCTAssertEqual(reason(#"{"id":"x","tokens":["aa"],"payload":{}}"#), "Malformed: topic is missing")
        XCTAssertEqual(reason(#"{"id":"x","topic":"t","payload":{}}"#), "Malformed: tokens is missing")
        XCTAssertEqual(reason(#"{"id":"x","topic":"t","tokens":[],"payload":{}}"#), "Malformed: tokens is empty")
        XCTAssertEqual(reason(#"{"id":"x","topic":"t","tokens":["zz"],"payload":{}}"#), "Malformed: tokens[0] is not hex or base64")
        XCTAssertEqual(reason(#"{"id":"x","topic":"t","tokens":[5],"payload":{}}"#), "Malformed: tokens[0] is not a string")
        XCTAssertEqual(reason(#"{"id":"x","topic":"t","tokens":["\#(token("a", 1))"],"payload":"hi"}"#), "Malformed: payload is not a JSON object")
        XCTAssertEqual(reason(messageJSON(id: "", tokens: [token("a", 1)])), "Malformed: id must be 1..128 characters")
        XCTAssertEqual(reason(messageJSON(id: "k", tokens: [token("a", 1)], kind: "broadcast")),
                       "Malformed: kind must be \"private\", \"group\" or \"system\"")
        XCTAssertEqual(reason(messageJSON(id: "c", tokens: [token("a", 1)], extra: ["collapse_id": String(repeating: "c", count: 65)])),
                       "Malformed: collapse_id is 65 bytes, over 64")
        XCTAssertEqual(reason(messageJSON(id: "p", tokens: [token("a", 1)], extra: ["priority": 7])), "Malformed: priority must be 10, 5 or 1")
        XCTAssertNotNil(reason(messageJSON(id: "p", tokens: [token("a", 1)], extra: ["push_type": "sms"]))?.hasPrefix("Malformed: push_type must be one of"))
    }

    func testOneBadTokenDoesNotHoldBackTheOthersAndDuplicatesAreSentOnce() throws {
        let good = token("b", 2)
        let (message, rejected) = try XCTUnwrap(valid(messageJSON(id: "m", tokens: [good, "not-a-token", good.uppercased()])))
        XCTAssertEqual(message.tokens, [good])
        XCTAssertEqual(rejected, ["not-a-token"])
    }

    func testDuplicateTokensAreSentOnceInShortAndLongLists() throws {
        // Up to 16 tokens duplicates are found by comparison, beyond that with a set.
        for count in [2, 16, 17, 100] {
            let distinct = (0..<count).map { token("d", $0) }
            let listed = distinct + [distinct[0].uppercased(), distinct[count - 1]]
            let (message, rejected) = try XCTUnwrap(valid(messageJSON(id: "m", tokens: listed)))
            XCTAssertEqual(message.tokens, distinct, "\(count) tokens")
            XCTAssertEqual(rejected, [])
        }
    }

    func testTooManyTokens() {
        let many = (0...MessageParser.maxTokens).map { token("c", $0) }
        XCTAssertEqual(reason(messageJSON(id: "m", tokens: many)), "Malformed: tokens has 10001 entries, over 10000")
    }
}

final class DeviceTokenTests: XCTestCase {
    func testHexOfEitherCaseAndLengthBounds() {
        XCTAssertEqual(DeviceToken.normalize("ABCDEF0123456789"), "abcdef0123456789")
        XCTAssertNil(DeviceToken.normalize("abc"), "too short")
        XCTAssertNil(DeviceToken.normalize(String(repeating: "a", count: 17)), "odd length")
        XCTAssertNil(DeviceToken.normalize(String(repeating: "a", count: 202)), "too long")
        XCTAssertNotNil(DeviceToken.normalize(String(repeating: "a", count: 200)))
    }

    /// The lowercase-hex check reads eight bytes at a time, then the tail byte by byte: one wrong byte
    /// anywhere, in a word or in the tail, of any value, must be seen.
    func testEveryByteOfEveryPositionIsChecked() {
        let lowercaseHex = Set("0123456789abcdef".utf8)
        for length in [16, 18, 24, 64, 70] {
            let good = Array(String(repeating: "0123456789abcdef", count: 5).utf8.prefix(length))
            XCTAssertEqual(DeviceToken.normalize(String(decoding: good, as: UTF8.self)), String(decoding: good, as: UTF8.self))
            for position in 0..<length {
                for byte in UInt8(0)..<0x80 {
                    var bytes = good
                    bytes[position] = byte
                    let token = String(decoding: bytes, as: UTF8.self)
                    let normalized = DeviceToken.normalize(token)
                    if lowercaseHex.contains(byte) {
                        XCTAssertEqual(normalized, token, "\(length) bytes, 0x\(String(byte, radix: 16)) at \(position)")
                    } else if (0x41...0x46).contains(byte) {
                        XCTAssertEqual(normalized, token.lowercased(), "uppercase hex is lowercased")
                    } else {
                        XCTAssertNil(normalized, "\(length) bytes, 0x\(String(byte, radix: 16)) at \(position)")
                    }
                }
                // A two-byte character in place of two digits keeps the length even.
                if position + 1 < length {
                    let token = String(decoding: good[..<position], as: UTF8.self) + "é"
                        + String(decoding: good[(position + 2)...], as: UTF8.self)
                    XCTAssertNil(DeviceToken.normalize(token), "é at \(position) of \(length)")
                }
            }
        }
    }

    func testBase64Of32BytesBecomesHex() {
        let bytes = (0..<32).map { UInt8($0 * 7 & 0xff) }
        let base64 = Data(bytes).base64EncodedString()
        XCTAssertEqual(DeviceToken.normalize(base64), DeviceToken.hex(bytes))
        XCTAssertNil(DeviceToken.normalize(Data(bytes.prefix(16)).base64EncodedString()), "only 32-byte tokens")
    }
}
