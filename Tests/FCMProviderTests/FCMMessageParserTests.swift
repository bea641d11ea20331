import APNsProvider
@testable import FCMProvider
import Foundation
import PushCore
import XCTest

/// docs/message-format.md's rules for `"provider": "fcm"`: the provider field, registration tokens, FCM's message
/// object as the payload, and priority, expiration and collapse_id mapped into `android`.
final class FCMMessageParserTests: XCTestCase {
    /// FCM's rules are its module's: registered, as the worker registers it at start-up.
    override class func setUp() {
        super.setUp()
        _ = APNsModule.provider
        _ = PushProvider.fcm
    }

    let parser = MessageParser()
    let treeParser = MessageParser(readsFieldsDirectly: false)
    let now: Int64 = 1_800_000_000

    /// A registration token shaped like FCM's (163 bytes: an instance id, a colon, `APA91b` and Base64url).
    private func fcmToken(_ n: Int) -> String {
        let tail = "APA91b" + String(repeating: "Xk_9-", count: 30) + String(format: "%05d", n)
        return "d\(n)Zq7:" + tail
    }

    private func element(payload: String = #"{"notification":{"body":"hi","title":"Ann"}}"#,
                         tokens: [String]? = nil, extra: String = "") -> String {
        let list = (tokens ?? [fcmToken(1)]).map { token in
            var quoted: [UInt8] = []
            JSONWriter.writeString(token, into: &quoted)
            return String(decoding: quoted, as: UTF8.self)
        }.joined(separator: ",")
        return #"{"id":"f1","provider":"fcm","topic":"chat-android","tokens":[\#(list)],"payload":\#(payload)\#(extra)}"#
    }

    /// Parses with both readers, which must agree on every element (as the fuzzer checks).
    private func parse(_ text: String, now: Int64? = nil, file: StaticString = #filePath, line: UInt = #line) -> ParsedElement {
        let bytes = Array(text.utf8)
        let direct = parser.parse(bytes, seq: 3, now: now ?? self.now)
        let tree = treeParser.parse(bytes, seq: 3, now: now ?? self.now)
        XCTAssertEqual(String(describing: direct), String(describing: tree), "the two readers disagree", file: file, line: line)
        return direct
    }

    private func valid(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> (PushMessage, [String])? {
        guard case .valid(let message, let rejected) = parse(text, file: file, line: line) else {
            XCTFail("expected a valid message, got \(parse(text))", file: file, line: line)
            return nil
        }
        return (message, rejected)
    }

    private func reason(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> String? {
        if case .invalid(let reason, _) = parse(text, file: file, line: line) { return reason }
        return nil
    }

    private func payload(_ message: PushMessage) -> String { String(decoding: message.payload, as: UTF8.self) }

    // MARK: the provider field

    func testProviderDefaultsToAPNsAndAnExplicitAPNsChangesNothing() throws {
        let plain = messageJSONText(provider: nil)
        let explicit = messageJSONText(provider: #""apns""#)
        let (a, _) = try XCTUnwrap(valid(plain))
        let (b, _) = try XCTUnwrap(valid(explicit))
        XCTAssertEqual(a.headers.provider, .apns)
        XCTAssertEqual(b.headers.provider, .apns)
        XCTAssertEqual(a.headers, b.headers)
        XCTAssertEqual(a.payload, b.payload)
        XCTAssertEqual(a.tokens, b.tokens)
    }

    private func messageJSONText(provider: String?) -> String {
        let field = provider.map { #","provider":\#($0)"# } ?? ""
        return #"{"id":"a1","topic":"com.example.chat","tokens":["\#(String(repeating: "ab", count: 32))"],"payload":{"aps":{"alert":"hi"}}\#(field)}"#
    }

    func testAProviderOtherThanAPNsOrFCMIsMalformed() {
        for value in [#""gcm""#, #""FCM""#, "1", "null", "[]"] {
            // Registered provider modules join the list (`ProviderRegistryTests` registers one in its process).
            XCTAssertEqual(reason(messageJSONText(provider: value)), "Malformed: provider must be \(PushProvider.namesForErrors)", value)
            // Names in registration order: in one test process other modules may have registered before FCM.
            XCTAssertTrue(PushProvider.namesForErrors.hasPrefix(#""apns""#) && PushProvider.namesForErrors.contains(#""fcm""#),
                          PushProvider.namesForErrors)
        }
    }

    func testAValidFCMMessage() throws {
        let tokens = [fcmToken(1), fcmToken(2)]
        let text = element(payload: #"{"data":{"chat":"42","from_user":"ann"},"notification":{"body":"hi","title":"Ann"}}"#,
                           tokens: tokens, extra: #","kind":"group","uuid":"u-9","enqueued_at":1800000000123"#)
        let (message, rejected) = try XCTUnwrap(valid(text))
        XCTAssertEqual(rejected, [])
        XCTAssertEqual(message.id, "f1")
        XCTAssertEqual(message.seq, 3)
        XCTAssertEqual(message.kind, .group)
        XCTAssertEqual(message.uuid, "u-9")
        XCTAssertEqual(message.enqueuedAtMillis, 1_800_000_000_123)
        XCTAssertEqual(message.tokens, tokens, "registration tokens are sent as written")
        XCTAssertEqual(message.headers, PushHeaders(topic: "chat-android", appTopic: "chat-android", pushType: "", priority: 10,
                                                    expiration: nil, collapseID: nil, provider: .fcm))
        XCTAssertEqual(payload(message), #"{"data":{"chat":"42","from_user":"ann"},"notification":{"body":"hi","title":"Ann"}}"#)
    }

    /// A payload that is not in canonical form (kept without a tree when it is) gives the same message.
    func testThePayloadIsCanonicalWhetherKeptOrWritten() throws {
        let canonical = #"{"android":{"priority":"high"},"data":{"k":"v"}}"#
        for written in [canonical, #"{ "data": {"k": "v"}, "android": {"priority": "high"} }"#, #"{"data":{"k":"\u0076"},"android":{"priority":"high"}}"#] {
            let (message, _) = try XCTUnwrap(valid(element(payload: written)))
            XCTAssertEqual(payload(message), canonical, written)
        }
        let (empty, _) = try XCTUnwrap(valid(element(payload: "{}")))
        XCTAssertEqual(payload(empty), "{}", "a message of nothing but its target is FCM's to judge")
    }

    func testEveryFieldOfFCMsMessageIsAllowed() throws {
        let text = element(payload: #"{"android":{"data":{"a":"b"},"notification":{"title":"t"},"restricted_package_name":"com.x"},"#
                           + #""apns":{"payload":{"aps":{"badge":1}}},"data":{},"fcm_options":{"analytics_label":"l"},"#
                           + #""notification":{"image":"https://x/y.png"},"webpush":{"headers":{"Urgency":"high"}}}"#)
        XCTAssertNotNil(valid(text))
    }

    // MARK: tokens

    func testABadTokenGoesToFeedbackAndTheRestAreSent() throws {
        let good = [fcmToken(1), "a", String(repeating: "Zz:._-09", count: 512), String(repeating: "ab", count: 32)]
        XCTAssertEqual(good[2].utf8.count, 4096)
        let bad = ["", "has space", "slash/", "plus+", "quote\"", "é", String(repeating: "a", count: 4097), "new\nline"]
        let (message, rejected) = try XCTUnwrap(valid(element(tokens: [good[0], bad[0], good[1], bad[1], bad[2], good[2],
                                                                       bad[3], bad[4], bad[5], bad[6], good[3], bad[7]])))
        XCTAssertEqual(message.tokens, good, "kept as written (no case folding), in the producer's order")
        XCTAssertEqual(rejected, bad)
    }

    func testATokenListedTwiceIsSentOnce() throws {
        let (few, _) = try XCTUnwrap(valid(element(tokens: [fcmToken(1), fcmToken(2), fcmToken(1)])))
        XCTAssertEqual(few.tokens, [fcmToken(1), fcmToken(2)])
        let many = (0..<40).map { fcmToken($0 % 25) }
        let (message, _) = try XCTUnwrap(valid(element(tokens: many)))
        XCTAssertEqual(message.tokens, (0..<25).map(fcmToken))
    }

    func testNoGoodTokenIsMalformed() {
        XCTAssertEqual(reason(element(tokens: ["bad token", "x/y"])), "Malformed: tokens[0] is not an FCM registration token")
        XCTAssertEqual(reason(element(tokens: [])), "Malformed: tokens is empty")
        XCTAssertEqual(reason(#"{"id":"f1","provider":"fcm","topic":"t","tokens":[1],"payload":{}}"#),
                       "Malformed: tokens[0] is not a string")
    }

    // MARK: the payload

    func testAPayloadNamingATargetOrANameIsMalformed() {
        for key in ["token", "topic", "condition", "name"] {
            XCTAssertEqual(reason(element(payload: #"{"\#(key)":"x","data":{}}"#)),
                           #"Malformed: payload must not name "\#(key)" (the worker adds each token as the target)"#, key)
        }
    }

    func testAFieldFCMsMessageDoesNotHaveIsMalformed() {
        XCTAssertEqual(reason(element(payload: #"{"aps":{"alert":"hi"}}"#)),
                       "Malformed: payload.aps is not a field of an FCM message (allowed: android, apns, data, fcm_options, notification, webpush)")
    }

    func testADataValueThatIsNotAStringIsMalformed() {
        let cases: [(String, String)] = [
            (#"{"data":{"count":3}}"#, "Malformed: payload.data.count is a number, not a string (FCM data values are strings)"),
            (#"{"data":{"a":"x","ok":true}}"#, "Malformed: payload.data.ok is a boolean, not a string (FCM data values are strings)"),
            (#"{"data":{"n":null}}"#, "Malformed: payload.data.n is null, not a string (FCM data values are strings)"),
            (#"{"data":{"o":{"p":"q"}}}"#, "Malformed: payload.data.o is an object, not a string (FCM data values are strings)"),
            (#"{"android":{"data":{"n":1}}}"#, "Malformed: payload.android.data.n is a number, not a string (FCM data values are strings)"),
        ]
        for (payload, expected) in cases { XCTAssertEqual(reason(element(payload: payload)), expected, payload) }
    }

    /// What FCM refuses for every token is refused before a request is made, naming the field.
    func testWhatFCMRefusesForEveryTokenIsMalformedUpFront() {
        let cases: [(String, String)] = [
            (#"{"data":{"from":"x"}}"#, "Malformed: payload.data.from is a key FCM reserves (from, gcm, google...)"),
            (#"{"data":{"gcm":"x"}}"#, "Malformed: payload.data.gcm is a key FCM reserves (from, gcm, google...)"),
            (#"{"data":{"google.c.a.e":"1"}}"#, "Malformed: payload.data.google.c.a.e is a key FCM reserves (from, gcm, google...)"),
            (#"{"android":{"data":{"from":"x"}}}"#, "Malformed: payload.android.data.from is a key FCM reserves (from, gcm, google...)"),
            (#"{"notification":{"title":5}}"#, "Malformed: payload.notification.title is a number, not a string"),
            (#"{"android":{"priority":"urgent"}}"#, #"Malformed: payload.android.priority must be "normal" or "high""#),
            (#"{"android":{"priority":10}}"#, "Malformed: payload.android.priority is a number, not a string"),
            (#"{"android":{"ttl":"1h"}}"#, #"Malformed: payload.android.ttl must be a duration in seconds such as "3600s""#),
            (#"{"android":{"ttl":3600}}"#, "Malformed: payload.android.ttl is a number, not a string"),
            (#"{"android":{"ttl":"2419201s"}}"#, "Malformed: payload.android.ttl is over FCM's 28 days (2419200s)"),
            (#"{"android":{"collapse_key":1}}"#, "Malformed: payload.android.collapse_key is a number, not a string"),
            (#"{"android":{"direct_boot_ok":"yes"}}"#, "Malformed: payload.android.direct_boot_ok is a string, not true or false"),
            (#"{"android":{"notification":{"body_loc_args":["a",1]}}}"#, "Malformed: payload.android.notification.body_loc_args is an array, not an array of strings"),
            (#"{"android":{"notification":{"notification_count":"3"}}}"#, "Malformed: payload.android.notification.notification_count is a string, not an integer"),
            (#"{"android":{"notification":{"sticky":1}}}"#, "Malformed: payload.android.notification.sticky is a number, not true or false"),
        ]
        for (payload, expected) in cases { XCTAssertEqual(reason(element(payload: payload)), expected, payload) }
        // What FCM takes passes: both priority names in either case, durations with a fraction, 28 days exactly.
        for payload in [#"{"android":{"priority":"HIGH","ttl":"3.5s"}}"#, #"{"android":{"priority":"normal","ttl":"2419200s"}}"#,
                        #"{"data":{"fromage":"brie","googly":"x"},"android":{"notification":{"title_loc_args":["a"],"sticky":true,"notification_count":2}}}"#] {
            XCTAssertNotNil(valid(element(payload: payload)), payload)
        }
    }

    func testAFieldOfTheWrongTypeIsMalformed() {
        let cases: [(String, String)] = [
            (#"{"notification":"hi"}"#, "Malformed: payload.notification is a string, not an object"),
            (#"{"data":["a"]}"#, "Malformed: payload.data is an array, not an object"),
            (#"{"android":"high"}"#, "Malformed: payload.android is a string, not an object"),
            (#"{"apns":1}"#, "Malformed: payload.apns is a number, not an object"),
            (#"{"android":{"notification":[]}}"#, "Malformed: payload.android.notification is an array, not an object"),
            (#"{"android":{"data":"x"}}"#, "Malformed: payload.android.data is a string, not an object"),
        ]
        for (payload, expected) in cases { XCTAssertEqual(reason(element(payload: payload)), expected, payload) }
        XCTAssertEqual(reason(element(payload: "[]")), "Malformed: payload is not a JSON object")
        XCTAssertEqual(reason(#"{"id":"f1","provider":"fcm","topic":"t","tokens":["a"]}"#), "Malformed: payload is missing")
    }

    func testThePayloadIsAtMost4096BytesInCanonicalForm() throws {
        // {"data":{"k":"…"}} is 17 bytes around the value.
        let fits = #"{"data":{"k":"\#(String(repeating: "x", count: 4079))"}}"#
        XCTAssertNotNil(valid(element(payload: fits)))
        let over = #"{"data":{"k":"\#(String(repeating: "x", count: 4080))"}}"#
        XCTAssertEqual(reason(element(payload: over)), "Malformed: payload is 4097 bytes, over the 4096-byte limit for fcm")
        // Counted in canonical form, whitespace left out.
        let spaced = #"{ "data" : { "k" : "\#(String(repeating: "x", count: 4079))" } }"#
        XCTAssertNotNil(valid(element(payload: spaced)))
    }

    func testPushTypeIsAPNsOnly() {
        XCTAssertEqual(reason(element(extra: #","push_type":"alert""#)),
                       #"Malformed: push_type is for apns messages only: not allowed with provider "fcm""#)
    }

    // MARK: priority, expiration and collapse_id into android

    func testPriorityBecomesAndroidPriority() throws {
        for (priority, expected) in [(10, "high"), (5, "normal"), (1, "normal")] {
            let (message, _) = try XCTUnwrap(valid(element(extra: #","priority":\#(priority)"#)))
            XCTAssertEqual(payload(message), #"{"android":{"priority":"\#(expected)"},"notification":{"body":"hi","title":"Ann"}}"#)
            XCTAssertEqual(message.headers.priority, priority)
        }
        let (none, _) = try XCTUnwrap(valid(element()))
        XCTAssertEqual(payload(none), #"{"notification":{"body":"hi","title":"Ann"}}"#, "without priority FCM's default applies")
        XCTAssertEqual(reason(element(extra: #","priority":7"#)), "Malformed: priority must be 10, 5 or 1")
    }

    func testPriorityGivenBothWays() throws {
        for android in [#""high""#, #""HIGH""#] {
            let (message, _) = try XCTUnwrap(valid(element(payload: #"{"android":{"priority":\#(android)}}"#, extra: #","priority":10"#)))
            XCTAssertEqual(payload(message), #"{"android":{"priority":\#(android)}}"#, "the payload's own value stays")
        }
        XCTAssertNotNil(valid(element(payload: #"{"android":{"priority":"normal"}}"#, extra: #","priority":1"#)))
        for (android, priority) in [(#""normal""#, 10), (#""high""#, 5)] {
            XCTAssertEqual(reason(element(payload: #"{"android":{"priority":\#(android)}}"#, extra: #","priority":\#(priority)"#)),
                           "Malformed: priority conflicts with payload.android.priority", "\(android) against \(priority)")
        }
    }

    func testCollapseIDBecomesAndroidCollapseKey() throws {
        let (message, _) = try XCTUnwrap(valid(element(payload: #"{"android":{"notification":{"tag":"t"}}}"#, extra: #","collapse_id":"chat-7""#)))
        XCTAssertEqual(payload(message), #"{"android":{"collapse_key":"chat-7","notification":{"tag":"t"}}}"#)
        XCTAssertEqual(message.headers.collapseID, "chat-7")
        XCTAssertNotNil(valid(element(payload: #"{"android":{"collapse_key":"chat-7"}}"#, extra: #","collapse_id":"chat-7""#)))
        XCTAssertEqual(reason(element(payload: #"{"android":{"collapse_key":"chat-8"}}"#, extra: #","collapse_id":"chat-7""#)),
                       "Malformed: collapse_id conflicts with payload.android.collapse_key")
        XCTAssertEqual(reason(element(extra: #","collapse_id":5"#)), "Malformed: collapse_id is not a string")
    }

    func testAnExpirationOfZeroIsATTLOfZero() throws {
        let (message, _) = try XCTUnwrap(valid(element(extra: #","expiration":0"#)))
        XCTAssertEqual(payload(message), #"{"android":{"ttl":"0s"},"notification":{"body":"hi","title":"Ann"}}"#)
        XCTAssertEqual(message.headers.expiration, 0)
        XCTAssertNotNil(valid(element(payload: #"{"android":{"ttl":"0s"}}"#, extra: #","expiration":0"#)))
        XCTAssertEqual(reason(element(payload: #"{"android":{"ttl":"60s"}}"#, extra: #","expiration":0"#)),
                       "Malformed: expiration conflicts with payload.android.ttl")
        let (none, _) = try XCTUnwrap(valid(element()))
        XCTAssertNil(none.headers.expiration, "no expiration given: none is sent")
        XCTAssertFalse(payload(none).contains("ttl"), "without expiration FCM's default ttl applies")
    }

    /// A later expiration is the seconds left when the body is made (FCMRequestBody), not when it was parsed.
    func testALaterExpirationIsTheSecondsLeftWhenTheBodyIsMade() throws {
        for extra in [#","expiration":"+3600""#, #","expiration":1800003600"#] {
            let (message, _) = try XCTUnwrap(valid(element(extra: extra)))
            XCTAssertEqual(message.headers.expiration, now + 3600)
            XCTAssertEqual(payload(message), #"{"notification":{"body":"hi","title":"Ann"}}"#)
            let job = PushJob(message: message)
            XCTAssertEqual(try androidTTL(FCMRequestBody(job: job, nowSeconds: now).body(token: "t")), "3600s")
            XCTAssertEqual(try androidTTL(FCMRequestBody(job: job, nowSeconds: now + 100).body(token: "t")), "3500s")
        }
        XCTAssertEqual(reason(element(extra: #","expiration":1799999999"#)), "Expired")
    }

    func testExpirationGivenBothWays() throws {
        for ttl in ["3600s", "3600.000s", "3600.0s"] {
            let (message, _) = try XCTUnwrap(valid(element(payload: #"{"android":{"priority":"high","ttl":"\#(ttl)"}}"#,
                                                            extra: #","expiration":"+3600""#)))
            // The equal ttl leaves the payload: the body gets the seconds left when it is made.
            XCTAssertEqual(payload(message), #"{"android":{"priority":"high"}}"#, ttl)
            XCTAssertEqual(try androidTTL(FCMRequestBody(payload: message.payload, expiration: message.headers.expiration,
                                                         nowSeconds: now + 1).body(token: "t")), "3599s")
        }
        for ttl in [#""3599s""#, #""3600.5s""#] {
            XCTAssertEqual(reason(element(payload: #"{"android":{"ttl":\#(ttl)}}"#, extra: #","expiration":"+3600""#)),
                           "Malformed: expiration conflicts with payload.android.ttl", ttl)
        }
        // A ttl that is no duration at all is refused as such, expiration or not.
        for ttl in [#""3600""#, #""1h""#, #""-3600s""#] {
            XCTAssertEqual(reason(element(payload: #"{"android":{"ttl":\#(ttl)}}"#, extra: #","expiration":"+3600""#)),
                           #"Malformed: payload.android.ttl must be a duration in seconds such as "3600s""#, ttl)
        }
        let (onlyPayload, _) = try XCTUnwrap(valid(element(payload: #"{"android":{"ttl":"3.5s"}}"#)))
        XCTAssertEqual(payload(onlyPayload), #"{"android":{"ttl":"3.5s"}}"#, "a ttl without expiration is the producer's")
    }

    func testAnExpirationPastFourWeeksIsSentAsFourWeeks() throws {
        let (message, _) = try XCTUnwrap(valid(element(extra: #","expiration":"+10000000""#)))
        XCTAssertEqual(try androidTTL(FCMRequestBody(payload: message.payload, expiration: message.headers.expiration,
                                                     nowSeconds: now).body(token: "t")), "2419200s")
        XCTAssertNotNil(valid(element(payload: #"{"android":{"ttl":"2419200s"}}"#, extra: #","expiration":"+10000000""#)))
    }

    func testAllThreeMapTogetherIntoAnExistingAndroidObject() throws {
        let (message, _) = try XCTUnwrap(valid(element(payload: #"{"android":{"notification":{"body":"b"}},"data":{"k":"v"}}"#,
                                                        extra: #","priority":5,"expiration":0,"collapse_id":"c""#)))
        XCTAssertEqual(payload(message),
                       #"{"android":{"collapse_key":"c","notification":{"body":"b"},"priority":"normal","ttl":"0s"},"data":{"k":"v"}}"#)
    }

    func testAMalformedFCMMessageKeepsItsIDForTheLog() {
        guard case .invalid(_, let id) = parse(element(payload: #"{"token":"x"}"#)) else { return XCTFail("expected invalid") }
        XCTAssertEqual(id, "f1")
    }

    private func androidTTL(_ body: [UInt8]) throws -> String? {
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])
        let message = try XCTUnwrap(object["message"] as? [String: Any])
        return (message["android"] as? [String: Any])?["ttl"] as? String
    }
}
