import AndroidPushKit
import Foundation
@testable import HuaweiProvider
import ProviderKit
import PushCore
import TestSupport
import XCTest

/// The v1 and v3 request bodies made from the common Android payload, compared byte for byte (they are written
/// canonically): the mapping of docs/vendors.md, the app's category, the ttl from `expiration`, the collapse hash, the
/// `huawei` object merged in last, and the tokens spliced into the list.
final class HuaweiRequestBodyTests: XCTestCase {
    private let full = #"{"notification":{"title":"Alice","body":"hi","image":"https://example.com/a.png"},"data":{"n":"2","cid":"c1"}}"#

    private func v1(_ payload: String, category: String = "IM", ttl: Int64? = nil, collapseID: String? = nil,
                    tokens: [String] = ["t1", "t2"]) -> String {
        let document = HuaweiV1Request.document(AndroidPayload(bytes: Array(payload.utf8), vendorKey: "huawei"), category: category, ttlSeconds: ttl,
                                                collapseID: collapseID)
        return String(decoding: TokenListBody(document: document, path: ["message"]).body(tokens: tokens), as: UTF8.self)
    }

    private func v3(_ payload: String, category: String = "IM", ttl: Int64? = nil, collapseID: String? = nil,
                    tokens: [String] = ["t1", "t2"]) -> String {
        let document = HuaweiV3Request.document(AndroidPayload(bytes: Array(payload.utf8), vendorKey: "huawei"), category: category, ttlSeconds: ttl,
                                                collapseID: collapseID)
        return String(decoding: TokenListBody(document: document, path: ["target"]).body(tokens: tokens), as: UTF8.self)
    }

    /// Without a collapse id, the notification id is the hash of the message's id: a batch sent again replaces
    /// what the phone shows (no tag: nothing to collapse with), and distinct messages stack.
    func testTheNotificationIDIsTheMessageIDsHashWithoutACollapseID() {
        let payload = AndroidPayload(bytes: Array(#"{"notification":{"body":"hi"}}"#.utf8), vendorKey: "huawei")
        let v1 = HuaweiV1Request.document(payload, category: "IM", ttlSeconds: nil, collapseID: nil, messageID: "m-7")
        XCTAssertEqual(v1["message"]?["android"]?["notification"]?["notify_id"], .number(String(CollapseNotifyID.of("m-7"))))
        XCTAssertNil(v1["message"]?["android"]?["notification"]?["tag"])
        let v3 = HuaweiV3Request.document(payload, category: "IM", ttlSeconds: nil, collapseID: nil, messageID: "m-7")
        XCTAssertEqual(v3["payload"]?["notification"]?["notifyId"], .number(String(CollapseNotifyID.of("m-7"))))
        let collapsed = HuaweiV3Request.document(payload, category: "IM", ttlSeconds: nil, collapseID: "c1", messageID: "m-7")
        XCTAssertEqual(collapsed["payload"]?["notification"]?["notifyId"], .number(String(CollapseNotifyID.of("c1"))))
    }

    // MARK: v1

    func testV1FullPayload() {
        XCTAssertEqual(v1(full, ttl: 3600, collapseID: "chat-42"),
                       #"{"message":{"android":{"category":"IM","notification":{"body":"hi","click_action":{"type":3},"#
                       + #""image":"https://example.com/a.png","notify_id":330396544,"tag":"chat-42","title":"Alice"},"ttl":"3600s"},"#
                       + #""data":"{\"cid\":\"c1\",\"n\":\"2\"}","token":["t1","t2"]},"validate_only":false}"#)
    }

    func testV1MinimalPayloadSetsOnlyWhatItHas() {
        XCTAssertEqual(v1(#"{"notification":{"body":"hi"}}"#, tokens: ["t1"]),
                       #"{"message":{"android":{"category":"IM","notification":{"body":"hi","click_action":{"type":3}}},"token":["t1"]},"validate_only":false}"#)
    }

    func testV1DataMessageHasNoNotificationAndNoCategory() {
        XCTAssertEqual(v1(#"{"data":{"k":"v"}}"#, tokens: ["t1"]),
                       #"{"message":{"data":"{\"k\":\"v\"}","token":["t1"]},"validate_only":false}"#)
        XCTAssertEqual(v1(#"{"data":{"k":"v"}}"#, ttl: 60, tokens: ["t1"]),
                       #"{"message":{"android":{"ttl":"60s"},"data":"{\"k\":\"v\"}","token":["t1"]},"validate_only":false}"#)
    }

    func testV1CategoryIsTheAppsUnlessTheHuaweiObjectSetsIt() {
        let plain = #"{"notification":{"title":"a","body":"b"}}"#
        XCTAssertTrue(v1(plain, category: "IM").contains(#""category":"IM""#))
        XCTAssertTrue(v1(plain, category: "VOIP").contains(#""category":"VOIP""#))
        XCTAssertFalse(v1(plain, category: "").contains("category"), "no class configured: none sent")
        let overridden = #"{"notification":{"title":"a","body":"b"},"huawei":{"android":{"category":"WORK"}}}"#
        XCTAssertTrue(v1(overridden, category: "IM").contains(#""category":"WORK""#))
        XCTAssertFalse(v1(overridden, category: "IM").contains(#""IM""#))
    }

    func testV1HuaweiObjectMergesLastAsAMergePatch() {
        let payload = #"{"notification":{"title":"a","body":"b"},"huawei":{"android":{"urgency":"HIGH","bi_tag":"m-1","#
            + #""notification":{"click_action":{"type":2,"url":"https://example.com"},"importance":"NORMAL"}},"#
            + #""validate_only":true,"review":[{"reviewer":"tuibian"}],"token":["stolen"],"topic":"news"}}"#
        let body = jsonObject(v1(payload, ttl: 60, collapseID: "c"))
        XCTAssertEqual(body["validate_only"] as? Bool, true, "a top-level field goes to the top")
        XCTAssertEqual((body["review"] as? [[String: String]])?.first?["reviewer"], "tuibian")
        let message = body["message"] as? [String: Any] ?? [:]
        XCTAssertEqual(message["token"] as? [String], ["t1", "t2"], "the job's tokens are the only target")
        XCTAssertNil(message["topic"])
        let android = message["android"] as? [String: Any] ?? [:]
        XCTAssertEqual(android["urgency"] as? String, "HIGH")
        XCTAssertEqual(android["bi_tag"] as? String, "m-1")
        XCTAssertEqual(android["ttl"] as? String, "60s", "what the object does not name stays")
        let notification = android["notification"] as? [String: Any] ?? [:]
        XCTAssertEqual(notification["title"] as? String, "a")
        XCTAssertEqual(notification["importance"] as? String, "NORMAL")
        XCTAssertEqual(notification["tag"] as? String, "c")
        let click = notification["click_action"] as? [String: Any] ?? [:]
        XCTAssertEqual(click["type"] as? Int, 2, "the object's value replaces the worker's")
        XCTAssertEqual(click["url"] as? String, "https://example.com")

        // The other reading: the object as the whole request, `message` inside it.
        let whole = jsonObject(v1(#"{"notification":{"body":"b"},"huawei":{"message":{"android":{"category":"VOIP"}}}}"#))
        XCTAssertEqual(((whole["message"] as? [String: Any])?["android"] as? [String: Any])?["category"] as? String, "VOIP")
        // null removes what the worker set.
        let dropped = v1(#"{"notification":{"body":"b"},"huawei":{"android":{"ttl":null,"category":null}}}"#, ttl: 60)
        XCTAssertFalse(dropped.contains("ttl"))
        XCTAssertFalse(dropped.contains("category"))
    }

    func testV1TokensAreEscapedAndSplicedInOrder() {
        let body = v1(#"{"notification":{"body":"b"}}"#, tokens: ["a\"b", "c", "d\\e"])
        XCTAssertEqual((jsonObject(body)["message"] as? [String: Any])?["token"] as? [String], ["a\"b", "c", "d\\e"])
    }

    // MARK: v3

    func testV3FullPayload() {
        XCTAssertEqual(v3(full, ttl: 3600, collapseID: "chat-42"),
                       #"{"payload":{"notification":{"body":"hi","category":"IM","clickAction":{"actionType":0,"data":{"cid":"c1","n":"2"}},"#
                       + #""image":"https://example.com/a.png","notifyId":330396544,"title":"Alice"}},"pushOptions":{"ttl":3600},"#
                       + #""target":{"token":["t1","t2"]}}"#)
    }

    func testV3MinimalPayload() {
        XCTAssertEqual(v3(#"{"notification":{"title":"a","body":"b"}}"#, tokens: ["t1"]),
                       #"{"payload":{"notification":{"body":"b","category":"IM","clickAction":{"actionType":0},"title":"a"}},"target":{"token":["t1"]}}"#)
    }

    func testV3HuaweiObjectMergesIntoTheWholeRequest() {
        let payload = #"{"notification":{"title":"a","body":"b"},"huawei":{"payload":{"notification":{"category":"WORK","badge":{"addNum":1}}},"#
            + #""pushOptions":{"biTag":"m-1","ttl":30},"target":{"token":["stolen"]}}}"#
        let body = jsonObject(v3(payload, category: "IM", ttl: 60))
        let notification = (body["payload"] as? [String: Any])?["notification"] as? [String: Any] ?? [:]
        XCTAssertEqual(notification["category"] as? String, "WORK")
        XCTAssertEqual(notification["title"] as? String, "a")
        XCTAssertEqual(notification["badge"] as? [String: Int], ["addNum": 1])
        let options = body["pushOptions"] as? [String: Any] ?? [:]
        XCTAssertEqual(options["biTag"] as? String, "m-1")
        XCTAssertEqual(options["ttl"] as? Int, 30, "the object's ttl wins: it comes last")
        XCTAssertEqual((body["target"] as? [String: Any])?["token"] as? [String], ["t1", "t2"])
        XCTAssertFalse(v3(#"{"notification":{"title":"a","body":"b"}}"#, category: "").contains("category"))
    }

    // MARK: expiration and collapse id

    func testExpirationBecomesTheSecondsLeftClampedToFifteenDays() {
        let now: Int64 = 1_800_000_000
        XCTAssertNil(HuaweiTTL.seconds(expiration: nil, nowSeconds: now), "none given: Huawei's default")
        XCTAssertEqual(HuaweiTTL.seconds(expiration: 0, nowSeconds: now), 1, "0: the shortest")
        XCTAssertEqual(HuaweiTTL.seconds(expiration: now + 3600, nowSeconds: now), 3600)
        XCTAssertEqual(HuaweiTTL.seconds(expiration: now, nowSeconds: now), 1)
        XCTAssertEqual(HuaweiTTL.seconds(expiration: now - 10, nowSeconds: now), 1, "past: the shortest, never negative")
        XCTAssertEqual(HuaweiTTL.seconds(expiration: now + 1_296_000, nowSeconds: now), 1_296_000)
        XCTAssertEqual(HuaweiTTL.seconds(expiration: now + 30 * 86_400, nowSeconds: now), 1_296_000, "over 15 days: 15 days")
        XCTAssertEqual(HuaweiTTL.seconds(expiration: .max, nowSeconds: -now), 1_296_000, "no overflow")
        XCTAssertEqual(HuaweiTTL.seconds(expiration: .min, nowSeconds: now), 1)
    }

    func testCollapseIDIsAStable31BitFNV1aHash() {
        // FNV-1a 32 test vectors, top bit cleared.
        XCTAssertEqual(Int64(CollapseNotifyID.of("")), 0x811c_9dc5 & 0x7fff_ffff)
        XCTAssertEqual(Int64(CollapseNotifyID.of("a")), 0xe40c_292c & 0x7fff_ffff)
        XCTAssertEqual(Int64(CollapseNotifyID.of("foobar")), 0xbf9c_f968 & 0x7fff_ffff)
        XCTAssertEqual(Int64(CollapseNotifyID.of("chat-42")), 330_396_544)
        XCTAssertNotEqual(CollapseNotifyID.of("chat-42"), CollapseNotifyID.of("chat-43"))
        for text in ["x", "会话-7", String(repeating: "z", count: 300)] {
            XCTAssertTrue((0...Int64(Int32.max)).contains(Int64(CollapseNotifyID.of(text))))
        }
    }
}
