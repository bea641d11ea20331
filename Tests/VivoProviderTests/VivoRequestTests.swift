import AndroidPushKit
import ProviderKit
import PushCore
@testable import VivoProvider
import XCTest

/// vivo's requests for a job: a send per regId with its de-duplication id, the list body saved once and pushed
/// to up to 1,000 regIds, the class per message class, the auth sign.
final class VivoRequestTests: XCTestCase {
    private let app = VivoApp(topic: "com.example.chat", appID: "10004", appKey: "key", appSecretFile: "s")

    private func message(_ payload: String, classification: Int = 1, category: String = "IM", ttl: Int64? = 3600) -> JSONValue {
        VivoRequest.message(AndroidPayload(bytes: Array(payload.utf8), vendorKey: "vivo"), app: app, classification: classification,
                            category: category, ttlSeconds: ttl, collapseID: nil, messageID: "m-1")
    }

    func testASendCarriesTheRegIdTheClassAndARequestIDThatIsTheSameOnARetry() {
        let made = String(decoding: VivoRequest.send(message(#"{"notification":{"title":"Alice","body":"hi"},"data":{"cid":"c1"}}"#),
                                                     token: "R1", requestID: "k-1"), as: UTF8.self)
        let notifyID = CollapseNotifyID.of(collapseID: nil, messageID: "m-1")
        XCTAssertEqual(made, #"{"appId":10004,"category":"IM","classification":1,"clientCustomMap":{"cid":"c1"},"content":"hi","#
                       + #""notifyId":\#(notifyID),"notifyType":4,"regId":"R1","requestId":"k-1","skipType":1,"timeToLive":3600,"title":"Alice"}"#)
        XCTAssertEqual(VivoRequest.requestID(messageID: "m-1", tokens: ["R1", "R2"]), VivoRequest.requestID(messageID: "m-1", tokens: ["R1", "R2"]))
        XCTAssertNotEqual(VivoRequest.requestID(messageID: "m-1", tokens: ["R1", "R2"]), VivoRequest.requestID(messageID: "m-1", tokens: ["R2"]),
                          "another set of tokens is another request")
        XCTAssertLessThanOrEqual(VivoRequest.requestID(messageID: String(repeating: "x", count: 300), tokens: ["R"]).count, 64)
    }

    func testAListPushNamesTheSavedTaskAndItsRegIds() {
        XCTAssertEqual(String(decoding: VivoRequest.pushToList(app: app, tokens: ["R1", "R2"], taskID: "t9", requestID: "k-2"), as: UTF8.self),
                       #"{"appId":10004,"pushMode":0,"regIds":["R1","R2"],"requestId":"k-2","taskId":"t9"}"#)
    }

    func testTheVivoObjectMergesLastWithoutTargets() {
        let made = String(decoding: VivoRequest.send(message(#"{"notification":{"body":"b"},"vivo":{"extra":{"callback.id":"1"},"regId":"X","skipType":2}}"#),
                                                     token: "R1", requestID: "k"), as: UTF8.self)
        XCTAssertTrue(made.contains(#""skipType":2"#), made)
        XCTAssertTrue(made.contains(#""callback.id":"1""#), made)
        XCTAssertTrue(made.contains(#""regId":"R1""#), made)
        XCTAssertFalse(made.contains(#""X""#), made)
    }

    func testTheTtlIsBetweenAMinuteAndADay() {
        XCTAssertEqual(VivoRequest.ttl.seconds(expiration: 100 + 10 * 86_400, nowSeconds: 100), 86_400)
        XCTAssertEqual(VivoRequest.ttl.seconds(expiration: 0, nowSeconds: 100), 60)
    }

    func testTheSignIsTheLowerCaseMD5OfIDKeyTimestampAndSecret() {
        // python3 -c "import hashlib; print(hashlib.md5(b'10004key1700000000000secret').hexdigest())"
        XCTAssertEqual(VivoAuth.sign(appID: "10004", appKey: "key", timestamp: 1_700_000_000_000, appSecret: Secret("secret")), "c8c535379302fced2a2076f8473068db")
    }
}
