import AndroidPushKit
@testable import OPPOProvider
import ProviderKit
import PushCore
import XCTest

/// OPPO's forms for a job: one token a `unicast` (`message`), several a `unicast_batch` (`messages`, one object per
/// token), the auth token in the form, the class, ttl, notification id and de-duplication id of the message.
final class OPPORequestTests: XCTestCase {
    private func item(_ payload: String, category: String = "IM", notifyLevel: Int = 2, channelID: String = "",
                      ttl: Int64? = 3600) -> OPPORequest.ItemBody {
        OPPORequest.ItemBody(OPPORequest.item(AndroidPayload(bytes: Array(payload.utf8), vendorKey: "oppo"), category: category,
                                              notifyLevel: notifyLevel, channelID: channelID, ttlSeconds: ttl, collapseID: nil,
                                              messageID: "m-1"))
    }

    /// The form's fields, decoded.
    private func fields(_ form: [UInt8]) -> [String: String] {
        var result: [String: String] = [:]
        for pair in String(decoding: form, as: UTF8.self).split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
            result[parts[0]] = parts.count > 1 ? parts[1].removingPercentEncoding : ""
        }
        return result
    }

    func testOneTokenIsAUnicastMessage() throws {
        let form = fields(OPPORequest.form(item: item(#"{"notification":{"title":"Alice","body":"hi"},"data":{"cid":"c1"}}"#),
                                           tokens: ["CN_abc"], authToken: "tok+en/="))
        XCTAssertEqual(form["auth_token"], "tok+en/=")
        let message = try XCTUnwrap(form["message"])
        let notifyID = CollapseNotifyID.of(collapseID: nil, messageID: "m-1")
        XCTAssertEqual(message, #"{"notification":{"action_parameters":"{\"cid\":\"c1\"}","app_message_id":"\#(MessageKey.of(messageID: "m-1"))","#
                       + #""category":"IM","click_action_type":0,"content":"hi","notify_id":\#(notifyID),"notify_level":2,"off_line":true,"#
                       + #""off_line_ttl":3600,"title":"Alice"},"target_type":2,"target_value":"CN_abc"}"#)
        XCTAssertNil(form["messages"])
    }

    func testSeveralTokensAreABatchOfOneMessageEach() throws {
        let form = fields(OPPORequest.form(item: item(#"{"notification":{"title":"T","body":"b"}}"#), tokens: ["r1", "r2", "r3"], authToken: "t"))
        let list = try XCTUnwrap(JSONParser.parse(Array(try XCTUnwrap(form["messages"]).utf8)).arrayValue)
        XCTAssertEqual(list.compactMap { $0["target_value"]?.stringValue }, ["r1", "r2", "r3"])
        XCTAssertEqual(Set(list.compactMap { $0["notification"]?["content"]?.stringValue }), ["b"])
    }

    func testTheClassNeedsACategoryAndTheChannelIsSentWhenSet() throws {
        let none = String(decoding: item(#"{"notification":{"body":"b"}}"#, category: "", notifyLevel: 2).body(tokens: ["r"]), as: UTF8.self)
        XCTAssertFalse(none.contains("category"), none)
        XCTAssertFalse(none.contains("notify_level"), "a notify_level needs a category: \(none)")
        let channel = String(decoding: item(#"{"notification":{"body":"b"}}"#, channelID: "im").body(tokens: ["r"]), as: UTF8.self)
        XCTAssertTrue(channel.contains(#""channel_id":"im""#), channel)
    }

    func testTheOPPOObjectMergesIntoEachMessageButNotItsTarget() {
        let made = String(decoding: item(#"{"notification":{"body":"b"},"oppo":{"notification":{"style":2},"target_value":"X","target_type":5}}"#)
            .body(tokens: ["r"]), as: UTF8.self)
        XCTAssertTrue(made.contains(#""style":2"#), made)
        XCTAssertTrue(made.contains(#""target_type":2"#), made)
        XCTAssertTrue(made.hasSuffix(#""target_value":"r"}"#), made)
        XCTAssertFalse(made.contains(#""X""#), made)
    }

    func testTheTtlIsAtMostTenDays() {
        XCTAssertEqual(OPPORequest.ttl.seconds(expiration: 100 + 30 * 86_400, nowSeconds: 100), 864_000)
    }
}
