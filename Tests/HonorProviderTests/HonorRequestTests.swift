import AndroidPushKit
@testable import HonorProvider
import ProviderKit
import PushCore
import XCTest

/// The request Honor gets for a job: the common payload mapped into its camelCase shape, the chat class as
/// `importance`, the ttl, the notification id, the `honor` object merged last, the tokens spliced in as a list.
final class HonorRequestTests: XCTestCase {
    private func body(_ payload: String, importance: String = "NORMAL", ttl: Int64? = nil, collapseID: String? = nil,
                      tokens: [String] = ["T1", "T2"]) -> String {
        let document = HonorRequest.document(AndroidPayload(bytes: Array(payload.utf8), vendorKey: "honor"), importance: importance,
                                             ttlSeconds: ttl, collapseID: collapseID, messageID: "m-1")
        return String(decoding: TokenListBody(document: document, path: []).body(tokens: tokens), as: UTF8.self)
    }

    func testANotificationWithItsClassTtlAndNotifyID() {
        let notifyID = CollapseNotifyID.of(collapseID: nil, messageID: "m-1")
        XCTAssertEqual(body(#"{"notification":{"title":"Alice","body":"hi"},"data":{"cid":"c1"}}"#, ttl: 3600),
                       #"{"android":{"notification":{"body":"hi","clickAction":{"type":3},"importance":"NORMAL","notifyId":\#(notifyID),"#
                       + #""title":"Alice"},"ttl":"3600s"},"data":"{\"cid\":\"c1\"}","token":["T1","T2"]}"#)
    }

    func testACollapseIDReplacesTheNotificationAndTagsIt() {
        let made = body(#"{"notification":{"body":"hi"}}"#, collapseID: "chat-42")
        XCTAssertTrue(made.contains(#""notifyId":\#(CollapseNotifyID.of("chat-42"))"#), made)
        XCTAssertTrue(made.contains(#""tag":"chat-42""#), made)
    }

    func testADataMessageHasNoNotificationAndNoClass() {
        XCTAssertEqual(body(#"{"data":{"cid":"c1"}}"#), #"{"data":"{\"cid\":\"c1\"}","token":["T1","T2"]}"#)
    }

    func testNoImportanceSendsNone() {
        XCTAssertFalse(body(#"{"notification":{"body":"hi"}}"#, importance: "").contains("importance"))
    }

    func testTheHonorObjectMergesLastAndCannotAddTargets() {
        let made = body(#"{"notification":{"body":"hi"},"honor":{"android":{"targetUserType":1,"notification":{"importance":"LOW"}},"token":["X"]}}"#)
        XCTAssertTrue(made.contains(#""importance":"LOW""#), made)
        XCTAssertTrue(made.contains(#""targetUserType":1"#), made)
        XCTAssertTrue(made.hasSuffix(#""token":["T1","T2"]}"#), made)
        XCTAssertFalse(made.contains(#""X""#), made)
    }

    func testTheTtlIsAtMostFifteenDays() {
        XCTAssertEqual(HonorRequest.ttl.seconds(expiration: 100 + 30 * 86_400, nowSeconds: 100), 1_296_000)
        XCTAssertEqual(HonorRequest.ttl.seconds(expiration: 0, nowSeconds: 100), 1)
    }
}
