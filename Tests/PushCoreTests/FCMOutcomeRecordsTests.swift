@testable import FCMProvider
import Foundation
import PushCore
import XCTest

/// docs/redis-keys.md: feedback entries and dead letters of FCM messages say `"provider": "fcm"`; APNs ones
/// stay as they were.
final class FCMOutcomeRecordsTests: XCTestCase {
    /// FCM's rules are its module's: registered, as the worker registers it at start-up.
    override class func setUp() {
        super.setUp()
        _ = PushProvider.fcm
    }

    private func object(_ bytes: [UInt8]) throws -> [String: Any] {
        try XCTUnwrap(JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
    }

    func testAnFCMFeedbackEntrySaysFCM() throws {
        let entry = try object(OutcomeRecords.feedback(token: "tok:1", topic: "app", reason: "BadDeviceToken",
                                                       timestampMillis: 5, messageID: "m", provider: .fcm))
        XCTAssertEqual(entry["provider"] as? String, "fcm")
        XCTAssertEqual(entry["token"] as? String, "tok:1")
        XCTAssertEqual(entry["reason"] as? String, "BadDeviceToken")
        let apns = OutcomeRecords.feedback(token: "ab", topic: "app", reason: "Unregistered", timestampMillis: 5, messageID: "m")
        XCTAssertEqual(String(decoding: apns, as: UTF8.self),
                       #"{"message_id":"m","reason":"Unregistered","timestamp":5,"token":"ab","topic":"app"}"#, "unchanged")
    }

    func testADeadLetterOfAnFCMMessageSaysFCM() throws {
        let fcm = #"{"id":"f","provider":"fcm","topic":"app","tokens":["t"],"payload":{"token":"x"}}"#
        let record = try object(OutcomeRecords.deadLetter(raw: Array(fcm.utf8), failedTokens: nil, reason: "Malformed: x",
                                                          status: nil, attempts: 0, failedAtMillis: 1, worker: "w"))
        XCTAssertEqual(record["provider"] as? String, "fcm")
        for apns in [#"{"id":"a","topic":"app","tokens":["t"],"payload":{}}"#, #"{"id":"a","provider":"apns"}"#, "not json"] {
            let record = try object(OutcomeRecords.deadLetter(raw: Array(apns.utf8), failedTokens: nil, reason: "r",
                                                              status: nil, attempts: 0, failedAtMillis: 1, worker: "w"))
            XCTAssertNil(record["provider"], apns)
        }
    }
}
