@testable import FCMProvider
import Foundation
import PushCore
import XCTest

/// docs/fcm.md's request body, `{"message":{<payload>,"token":"<token>"}}`, made once per job and the
/// token spliced in per request.
final class FCMRequestBodyTests: XCTestCase {
    /// FCM's rules are its module's: registered, as the worker registers it at start-up.
    override class func setUp() {
        super.setUp()
        _ = PushProvider.fcm
    }

    let now: Int64 = 1_800_000_000
    let token = "dZq7:APA91bHun4MxP5egoKMwt2KZFBaFUH-1RYqx_r-Xk9.z"

    private func object(_ bytes: [UInt8], file: StaticString = #filePath, line: UInt = #line) throws -> NSDictionary {
        let value = try JSONSerialization.jsonObject(with: Data(bytes))
        return try XCTUnwrap(value as? NSDictionary, "not a JSON object: \(String(decoding: bytes, as: UTF8.self))",
                             file: file, line: line)
    }

    private func expected(_ json: String) throws -> NSDictionary {
        try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.utf8)) as? NSDictionary)
    }

    /// Each case: payload as the parser makes it, expiration, and the message expected (token added).
    func testTheBodyIsTheMessageWithTheTokenAddedAndTheTTLWhereDue() throws {
        let cases: [(payload: String, expiration: Int64, message: String)] = [
            ("{}", 0, #"{"token":"T"}"#),
            (#"{"notification":{"body":"hi"}}"#, 0, #"{"notification":{"body":"hi"},"token":"T"}"#),
            (#"{"android":{"ttl":"0s"},"data":{"k":"v"}}"#, 0, #"{"android":{"ttl":"0s"},"data":{"k":"v"},"token":"T"}"#),
            ("{}", now + 60, #"{"android":{"ttl":"60s"},"token":"T"}"#),
            (#"{"data":{"k":"v"}}"#, now + 60, #"{"android":{"ttl":"60s"},"data":{"k":"v"},"token":"T"}"#),
            (#"{"android":{}}"#, now + 60, #"{"android":{"ttl":"60s"},"token":"T"}"#),
            (#"{"android":{},"webpush":{"a":"b"}}"#, now + 60, #"{"android":{"ttl":"60s"},"webpush":{"a":"b"},"token":"T"}"#),
            (#"{"android":{"priority":"high"},"data":{"k":"v"}}"#, now + 60,
             #"{"android":{"priority":"high","ttl":"60s"},"data":{"k":"v"},"token":"T"}"#),
            (#"{"android":{"notification":{"title":"x \"y\" é"}}}"#, now + 1,
             #"{"android":{"notification":{"title":"x \"y\" é"},"ttl":"1s"},"token":"T"}"#),
            ("{}", now - 5, #"{"android":{"ttl":"0s"},"token":"T"}"#),
            ("{}", now + 5_000_000, #"{"android":{"ttl":"2419200s"},"token":"T"}"#),
        ]
        for (payload, expiration, message) in cases {
            let body = FCMRequestBody(payload: Array(payload.utf8), expiration: expiration, nowSeconds: now)
            let bytes = body.body(token: token)
            let want = try expected(#"{"message":\#(message.replacingOccurrences(of: #""T""#, with: "\"\(token)\""))}"#)
            XCTAssertEqual(try object(bytes), want, "\(payload) at \(expiration): \(String(decoding: bytes, as: UTF8.self))")
            XCTAssertEqual(bytes, body.prefix + Array(token.utf8) + FCMRequestBody.suffix, "prefix, token, suffix")
        }
    }

    func testTheSameBodyServesEveryTokenOfTheJob() throws {
        let body = FCMRequestBody(payload: Array(#"{"data":{"k":"v"}}"#.utf8), expiration: 0, nowSeconds: now)
        var buffer = Array("leading".utf8)
        body.append(token: "second:token", to: &buffer)
        XCTAssertEqual(try object(Array(buffer.dropFirst(7))),
                       try expected(#"{"message":{"data":{"k":"v"},"token":"second:token"}}"#))
        XCTAssertEqual(try object(body.body(token: "first")), try expected(#"{"message":{"data":{"k":"v"},"token":"first"}}"#))
    }

    func testAJobsBodyTakesItsPayloadAndExpiration() throws {
        let headers = PushHeaders(topic: "app", appTopic: "app", pushType: "", priority: 10, expiration: now + 30,
                                  collapseID: nil, provider: .fcm)
        let message = PushMessage(seq: 1, id: "m", kind: .private, uuid: nil, headers: headers,
                                  payload: Array(#"{"notification":{"body":"b"}}"#.utf8), tokens: ["t1"], enqueuedAtMillis: nil)
        let body = FCMRequestBody(job: PushJob(message: message), nowSeconds: now)
        XCTAssertEqual(try object(body.body(token: "t1")),
                       try expected(#"{"message":{"android":{"ttl":"30s"},"notification":{"body":"b"},"token":"t1"}}"#))
    }

    /// Never for a token the parser accepted, but the body stays JSON whatever it is given.
    func testATokenThatNeedsEscapingIsEscaped() throws {
        let body = FCMRequestBody(payload: Array("{}".utf8), expiration: 0, nowSeconds: now)
        let odd = "a\"b\\c\nd"
        XCTAssertEqual(try object(body.body(token: odd)), ["message": ["token": odd]] as NSDictionary)
    }

    func testTTLSeconds() {
        XCTAssertEqual(FCMRequestBody.ttlSeconds(expiration: 0, nowSeconds: now), 0)
        XCTAssertEqual(FCMRequestBody.ttlSeconds(expiration: now + 7, nowSeconds: now), 7)
        XCTAssertEqual(FCMRequestBody.ttlSeconds(expiration: now - 7, nowSeconds: now), 0)
        XCTAssertEqual(FCMRequestBody.ttlSeconds(expiration: 4_294_967_295, nowSeconds: now), FCMRequestBody.maxTTLSeconds)
        XCTAssertEqual(FCMRequestBody.ttlSeconds(expiration: 5, nowSeconds: .min), FCMRequestBody.maxTTLSeconds, "no trap")
        XCTAssertEqual(FCMRequestBody.ttlSeconds(expiration: -5, nowSeconds: .max), 0, "no trap")
    }

    /// Every payload the parser accepts for FCM, with every expiration, makes a body that is JSON and holds
    /// the payload, the token and the ttl.
    func testBodiesOfParsedMessagesAreJSON() throws {
        let parser = MessageParser()
        let payloads = [#"{}"#, #"{"android":{"notification":{"title":"t"}}}"#, #"{"data":{"k":"v"},"webpush":{}}"#,
                        #"{"android":{"restricted_package_name":"com.x"},"apns":{"payload":{"aps":{"badge":1}}}}"#]
        let extras = ["", #","expiration":0"#, #","expiration":"+90""#, #","priority":5,"collapse_id":"x y""#]
        for payload in payloads {
            for extra in extras {
                let text = #"{"id":"f","provider":"fcm","topic":"app","tokens":["tok:1"],"payload":\#(payload)\#(extra)}"#
                guard case .valid(let message, _) = parser.parse(Array(text.utf8), seq: 1, now: now) else {
                    XCTFail("invalid: \(text)")
                    continue
                }
                let bytes = FCMRequestBody(job: PushJob(message: message), nowSeconds: now).body(token: "tok:1")
                let sent = try object(bytes)
                let messageObject = try XCTUnwrap(sent["message"] as? NSDictionary)
                XCTAssertEqual(messageObject["token"] as? String, "tok:1")
                let parsedPayload = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(message.payload)) as? NSDictionary)
                for case let key as String in parsedPayload.allKeys where key != "android" {
                    XCTAssertEqual(messageObject[key] as? NSObject, parsedPayload[key] as? NSObject, text)
                }
                if extra.contains("+90") {
                    XCTAssertEqual((messageObject["android"] as? NSDictionary)?["ttl"] as? String, "90s", text)
                }
            }
        }
    }
}
