@testable import FCMProvider
import ProviderKit
import PushCore
@testable import Pusher
import XCTest

/// FCM's outcome table (docs/fcm.md), answer by answer, in FCM's own error bodies.
final class FCMResponseClassifierTests: XCTestCase {
    /// FCM's rules are its module's: registered, as the worker registers it at start-up.
    override class func setUp() {
        super.setUp()
        _ = PushProvider.fcm
    }

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

    func testABadMessageIsADeadLetterWithFCMsCodeAsReasonAndItsWordsAsDetail() {
        XCTAssertEqual(classify(400, error(400, "INVALID_ARGUMENT", "Invalid value at 'message.data[0].value' (TYPE_STRING)", detail: "INVALID_ARGUMENT")),
                       .deadLetter(reason: "INVALID_ARGUMENT", detail: "Invalid value at 'message.data[0].value' (TYPE_STRING)"))
        let badRequestOnly = Array(#"{"error":{"code":400,"message":"Invalid JSON payload received.","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"field":"message.foo","description":"Unknown name"}]}]}}"#.utf8)
        XCTAssertEqual(classify(400, badRequestOnly), .deadLetter(reason: "INVALID_ARGUMENT", detail: "Invalid JSON payload received."),
                       "a field violation is FCM's answer about the message, even without an FcmError detail")
    }

    func testOnlyGooglesSentenceOrAFieldViolationOnTheTokenDropsTheToken() {
        // A message-level error that merely mentions registration tokens is the message's problem: feedback for
        // it would make the backend delete good tokens.
        XCTAssertEqual(classify(400, error(400, "INVALID_ARGUMENT", "Android registration token payload is too large", detail: "INVALID_ARGUMENT")),
                       .deadLetter(reason: "INVALID_ARGUMENT", detail: "Android registration token payload is too large"))
        XCTAssertEqual(classify(400, error(400, "INVALID_ARGUMENT", "The registration token is not a valid FCM registration token.", detail: "INVALID_ARGUMENT")),
                       .feedback(reason: "BadDeviceToken", timestampMillis: now))
        let onToken = Array(#"{"error":{"code":400,"message":"Invalid value","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"INVALID_ARGUMENT"},{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"field":"message.token","description":"Invalid registration token"}]}]}}"#.utf8)
        XCTAssertEqual(classify(400, onToken), .feedback(reason: "BadDeviceToken", timestampMillis: now))
    }

    func testOverloadRetriesNoSoonerThanRetryAfter() {
        XCTAssertEqual(classify(503, error(503, "UNAVAILABLE", detail: "UNAVAILABLE"), retryAfter: "7"),
                       .retry(reason: "UNAVAILABLE", notBeforeMillis: 7000, detail: "m"))
        XCTAssertEqual(classify(500, error(500, "INTERNAL", detail: "INTERNAL")), .retry(reason: "INTERNAL", detail: "m"))
        XCTAssertEqual(classify(502, []), .retry(reason: "HTTP502"))
    }

    private func quota(_ subject: String) -> [UInt8] {
        Array(#"{"error":{"code":429,"message":"Quota exceeded.","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"QUOTA_EXCEEDED"},{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"subject":"\#(subject)","description":"rate exceeded"}]}]}}"#.utf8)
    }

    func testAProjectQuotaHoldsTheProjectAMinuteWhenItNamesNoTimeAndAtMostAnHour() {
        XCTAssertEqual(classify(429, error(429, "RESOURCE_EXHAUSTED", detail: "QUOTA_EXCEEDED")),
                       .retry(reason: "QUOTA_EXCEEDED", notBeforeMillis: 60_000, holdService: true, detail: "m"),
                       "a 429 that does not say whose rate holds the project")
        XCTAssertEqual(classify(429, quota("project_id:p"), retryAfter: "3"),
                       .retry(reason: "QUOTA_EXCEEDED", notBeforeMillis: 3000, holdService: true, detail: "project_id:p: rate exceeded"))
        XCTAssertEqual(classify(429, quota("topic:news"), retryAfter: "86400"),
                       .retry(reason: "QUOTA_EXCEEDED", notBeforeMillis: 3_600_000, holdService: true, detail: "topic:news: rate exceeded"),
                       "a day's Retry-After holds the project an hour at most")
    }

    func testADevicesQuotaBacksOffThatTokenOnly() {
        XCTAssertEqual(classify(429, quota("device:dQw4w9WgXcQ")),
                       .retry(reason: "QUOTA_EXCEEDED", notBeforeMillis: nil, holdService: false, detail: "device:dQw4w9WgXcQ: rate exceeded"))
        XCTAssertEqual(classify(429, quota("device:x"), retryAfter: "20"),
                       .retry(reason: "QUOTA_EXCEEDED", notBeforeMillis: 20_000, holdService: false, detail: "device:x: rate exceeded"))
    }

    func testARejectedAccessTokenIsRenewedAndSentAgain() {
        XCTAssertEqual(classify(401, error(401, "UNAUTHENTICATED", "Request had invalid authentication credentials.")),
                       .renewAndResend(reason: "UNAUTHENTICATED"))
    }

    func testThirdPartyAuthErrorFailsTheTokenNotTheApp() {
        XCTAssertEqual(classify(401, error(401, "UNAUTHENTICATED", "Auth error from APNS or Web Push Service", detail: "THIRD_PARTY_AUTH_ERROR")),
                       .retry(reason: "THIRD_PARTY_AUTH_ERROR", detail: "Auth error from APNS or Web Push Service"))
    }

    func testPermissionDeniedPausesTheApp() {
        XCTAssertEqual(classify(403, error(403, "PERMISSION_DENIED", "Permission 'cloudmessaging.messages.create' denied")),
                       .credentialRefused(reason: "PERMISSION_DENIED"))
    }

    func testAnAnswerThatIsNotFCMsPausesTheAppRatherThanDeadLetteringTheBacklog() {
        XCTAssertEqual(classify(404, Array("<html><body>Not Found</body></html>".utf8)), .credentialRefused(reason: "NotFCM: HTTP 404 without an FCM error"))
        XCTAssertEqual(classify(404, error(404, "NOT_FOUND", "The requested URL /v1/projects/x/messages:send was not found on this server.")),
                       .credentialRefused(reason: "NotFCM: HTTP 404 without an FCM error"), "a wrong path or project: no FcmError detail")
        XCTAssertEqual(classify(400, Array("not json".utf8)), .credentialRefused(reason: "NotFCM: HTTP 400 without an FCM error"))
        XCTAssertEqual(classify(401, Array("proxy says no".utf8)), .credentialRefused(reason: "NotFCM: HTTP 401 without an FCM error"),
                       "a 401 that is not Google's is no reason to renew the access token forever")
        XCTAssertEqual(classify(413, []), .credentialRefused(reason: "NotFCM: HTTP 413 without an FCM error"))
    }

    func testHostileBodiesAreClippedAndNeverTrap() {
        let long = String(repeating: "x", count: 10_000)
        guard case .deadLetter(let reason, let detail) = classify(400, error(400, "INVALID_ARGUMENT", long, detail: "INVALID_ARGUMENT")) else { return XCTFail() }
        XCTAssertEqual(reason, "INVALID_ARGUMENT")
        XCTAssertLessThan(detail?.count ?? 0, 300)
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
