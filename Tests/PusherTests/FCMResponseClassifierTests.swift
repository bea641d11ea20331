@testable import Pusher
import XCTest

/// docs/fcm.md's outcome table, answer by answer, in FCM's own error bodies.
final class FCMResponseClassifierTests: XCTestCase {
    let now: Int64 = 1_800_000_000_000

    private func error(_ code: Int, _ status: String, _ message: String = "m", detail: String? = nil) -> [UInt8] {
        let details = detail.map { #","details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"\#($0)"}]"# } ?? ""
        return Array(#"{"error":{"code":\#(code),"message":"\#(message)","status":"\#(status)"\#(details)}}"#.utf8)
    }

    private func classify(_ status: Int, _ body: [UInt8], retryAfter: String? = nil) -> ServiceDecision {
        FCMResponseClassifier.classify(status: status, body: body, retryAfter: retryAfter, nowMillis: now)
    }

    func testDelivered() {
        XCTAssertEqual(classify(200, Array(#"{"name":"projects/p/messages/1"}"#.utf8)), .delivered)
    }

    func testDeadTokensAreFeedback() {
        XCTAssertEqual(classify(404, error(404, "NOT_FOUND", "Requested entity was not found.", detail: "UNREGISTERED")),
                       .feedback(reason: "Unregistered", timestampMillis: now))
        XCTAssertEqual(classify(400, error(400, "INVALID_ARGUMENT", "The registration token is not a valid FCM registration token", detail: "INVALID_ARGUMENT")),
                       .feedback(reason: "BadDeviceToken", timestampMillis: now))
        XCTAssertEqual(classify(403, error(403, "PERMISSION_DENIED", "SenderId mismatch", detail: "SENDER_ID_MISMATCH")),
                       .feedback(reason: "SenderIdMismatch", timestampMillis: now))
    }

    func testABadMessageIsADeadLetterNamingFCMsWords() {
        XCTAssertEqual(classify(400, error(400, "INVALID_ARGUMENT", "Invalid value at 'message.data[0].value' (TYPE_STRING)", detail: "INVALID_ARGUMENT")),
                       .deadLetter(reason: "INVALID_ARGUMENT: Invalid value at 'message.data[0].value' (TYPE_STRING)"))
        XCTAssertEqual(classify(413, []), .deadLetter(reason: "HTTP413"))
    }

    func testOverloadRetriesNoSoonerThanRetryAfter() {
        XCTAssertEqual(classify(503, error(503, "UNAVAILABLE", detail: "UNAVAILABLE"), retryAfter: "7"),
                       .retry(reason: "UNAVAILABLE", notBeforeMillis: 7000))
        XCTAssertEqual(classify(500, error(500, "INTERNAL", detail: "INTERNAL")), .retry(reason: "INTERNAL"))
        XCTAssertEqual(classify(502, []), .retry(reason: "HTTP502"))
    }

    func testQuotaHoldsTheWholeProjectAMinuteWhenItNamesNoTime() {
        XCTAssertEqual(classify(429, error(429, "RESOURCE_EXHAUSTED", detail: "QUOTA_EXCEEDED")),
                       .retry(reason: "QUOTA_EXCEEDED", notBeforeMillis: 60_000, holdService: true))
        XCTAssertEqual(classify(429, error(429, "RESOURCE_EXHAUSTED", detail: "QUOTA_EXCEEDED"), retryAfter: "3"),
                       .retry(reason: "QUOTA_EXCEEDED", notBeforeMillis: 3000, holdService: true))
    }

    func testARejectedAccessTokenIsRenewedAndSentAgain() {
        XCTAssertEqual(classify(401, error(401, "UNAUTHENTICATED", "Request had invalid authentication credentials.")),
                       .renewAndResend(reason: "UNAUTHENTICATED"))
    }

    func testCredentialProblemsPauseTheApp() {
        XCTAssertEqual(classify(401, error(401, "UNAUTHENTICATED", "Auth error from APNS or Web Push Service", detail: "THIRD_PARTY_AUTH_ERROR")),
                       .credentialRefused(reason: "THIRD_PARTY_AUTH_ERROR"))
        XCTAssertEqual(classify(403, error(403, "PERMISSION_DENIED", "Permission 'cloudmessaging.messages.create' denied")),
                       .credentialRefused(reason: "PERMISSION_DENIED"))
    }

    func testHostileBodiesAreClippedAndNeverTrap() {
        let long = String(repeating: "x", count: 10_000)
        guard case .deadLetter(let reason) = classify(400, error(400, "INVALID_ARGUMENT", long)) else { return XCTFail() }
        XCTAssertLessThan(reason.count, 300)
        XCTAssertEqual(classify(400, Array("not json".utf8)), .deadLetter(reason: "HTTP400"))
        XCTAssertEqual(classify(503, [], retryAfter: "99999999999999999999"), .retry(reason: "HTTP503"), "an unusable Retry-After is ignored")
    }

    func testRetryAfterAsSecondsOrAnHTTPDate() {
        XCTAssertEqual(RetryAfter.millis("120", nowMillis: 0), 120_000)
        XCTAssertEqual(RetryAfter.millis("-1", nowMillis: 0), nil)
        XCTAssertEqual(RetryAfter.millis("999999", nowMillis: 0), 86_400_000, "at most a day")
        // RFC 9110's example date is 784,111,777 s after the epoch.
        XCTAssertEqual(RetryAfter.millis("Sun, 06 Nov 1994 08:49:37 GMT", nowMillis: 784_111_747_000), 30_000)
        XCTAssertEqual(RetryAfter.millis("Sun, 06 Nov 1994 08:49:37 GMT", nowMillis: 784_111_800_000), 0, "a date past is now")
        XCTAssertNil(RetryAfter.millis("soon", nowMillis: 0))
    }
}
