@testable import FCMProvider
import Filter
import Foundation
import PushCore
import XCTest

/// docs/fcm.md: the filter reads what an Android user sees.
final class FCMAlertTextTests: XCTestCase {
    /// FCM's rules are its module's: registered, as the worker registers it at start-up.
    override class func setUp() {
        super.setUp()
        _ = PushProvider.fcm
    }

    func testReadsNotificationAndroidNotificationAndDataFields() {
        let payload = Array(#"{"android":{"notification":{"body":"android body","title":"android title"}},"data":{"other":"not read","preview":"data preview"},"notification":{"body":"the body","image":"https://x/y.png","title":"the title"}}"#.utf8)
        let texts = AlertText.texts(inPayload: payload, extraFields: ["preview"], provider: .fcm)
        XCTAssertEqual(Set(texts), ["the title", "the body", "android title", "android body", "data preview"])
    }

    func testADataPathGivenWithItsPrefixIsTheSameKey() {
        let payload = Array(#"{"data":{"preview":"p"}}"#.utf8)
        XCTAssertEqual(AlertText.texts(inPayload: payload, extraFields: ["data.preview"], provider: .fcm), ["p"])
    }

    /// `android.data` is the data an Android device gets (it overrides `data`): the configured keys are read there too.
    func testTheConfiguredKeysAreReadInAndroidDataToo() throws {
        let payload = Array(#"{"android":{"data":{"other":"not read","preview":"android preview"}},"data":{"preview":"data preview"}}"#.utf8)
        XCTAssertEqual(Set(AlertText.texts(inPayload: payload, extraFields: ["preview"], provider: .fcm)), ["data preview", "android preview"])
        XCTAssertEqual(Set(AlertText.texts(inPayload: payload, extraFields: ["data.preview"], provider: .fcm)), ["data preview", "android preview"])
        let withField = SensitiveWordFilter(words: ["spam"], extraFields: ["preview"])
        XCTAssertEqual(withField.match(try job(#"{"android":{"data":{"preview":"spam"}},"notification":{"body":"hello"}}"#)), "spam")
        XCTAssertNil(withField.match(try job(#"{"android":{"data":{"x":"spam"}},"notification":{"body":"hello"}}"#)))
    }

    /// A localized Android notification shows its `*_loc_args` in its title and body; FCM takes them in either
    /// spelling of its JSON (`body_loc_args` or `bodyLocArgs`), so both are read.
    func testTheLocArgsOfAnAndroidNotificationAreRead() throws {
        let filter = SensitiveWordFilter(words: ["spam"])
        XCTAssertEqual(filter.match(try job(#"{"android":{"notification":{"body_loc_args":["Alice","buy spam"],"body_loc_key":"MSG"}}}"#)), "spam")
        XCTAssertEqual(filter.match(try job(#"{"android":{"notification":{"title_loc_args":["s.p.a.m"],"title_loc_key":"T"}}}"#)), "spam")
        XCTAssertEqual(filter.match(try job(#"{"android":{"notification":{"bodyLocArgs":["spam"],"bodyLocKey":"MSG"}}}"#)), "spam")
        XCTAssertEqual(filter.match(try job(#"{"android":{"notification":{"titleLocArgs":["spam"],"titleLocKey":"T"}}}"#)), "spam")
        XCTAssertNil(filter.match(try job(#"{"android":{"notification":{"body_loc_args":["Alice","hello"],"body_loc_key":"MSG"}}}"#)))
    }

    func testAnAPNsAlertInsideAnFCMPayloadIsNotWhatTheUserSees() {
        // `aps` means nothing to FCM: a message routed to Android never shows it.
        let payload = Array(#"{"data":{"aps":"x"},"notification":{"body":"fine"}}"#.utf8)
        XCTAssertEqual(AlertText.texts(inPayload: payload, extraFields: [], provider: .fcm), ["fine"])
    }

    func testTheFilterDropsAnFCMMessageByItsNotificationBody() throws {
        let filter = SensitiveWordFilter(words: ["spam"])
        XCTAssertEqual(filter.match(try job(#"{"notification":{"body":"buy s p a m now"}}"#)), "spam")
        XCTAssertNil(filter.match(try job(#"{"data":{"x":"spam"},"notification":{"body":"hello"}}"#)),
                     "data keys are read only when filter.fields names them")
        let withField = SensitiveWordFilter(words: ["spam"], extraFields: ["x"])
        XCTAssertEqual(withField.match(try job(#"{"data":{"x":"spam"},"notification":{"body":"hello"}}"#)), "spam")
    }

    private func job(_ payload: String) throws -> PushJob {
        let element = #"{"id":"m1","provider":"fcm","topic":"com.example.chat","tokens":["fcm-token-1"],"payload":\#(payload)}"#
        guard case .valid(let message, _) = MessageParser().parse(Array(element.utf8), seq: 1, now: 1_800_000_000) else {
            XCTFail("not parsed: \(element)")
            throw CocoaError(.coderInvalidValue)
        }
        return PushJob(message: message)
    }
}
