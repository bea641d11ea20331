@testable import HonorProvider
import ProviderKit
import PushCore
import XCTest

/// Honor's answers, each token's outcome: the conservative reading of what Honor publishes (a token is dead only
/// when Honor names it expired; what is unclear is retried).
final class HonorResponseClassifierTests: XCTestCase {
    private let tokens = ["T1", "T2", "T3", "T4"]

    private func classify(_ status: Int, _ body: String, retryAfter: String? = nil) -> HonorResponseClassifier.Verdict {
        HonorResponseClassifier.classify(status: status, body: Array(body.utf8), count: tokens.count, tokenAt: { self.tokens[$0] },
                                         nowMillis: 1000, retryAfter: retryAfter)
    }

    func testSuccessDeliversAllButTheListedTokens() {
        let verdict = classify(200, #"{"code":200,"message":"success","data":{"sendResult":true,"requestId":"r","failTokens":["T3"],"expireTokens":["T2"]}}"#)
        XCTAssertEqual(verdict.answer.decision, .delivered)
        XCTAssertTrue(verdict.credentialAccepted)
        XCTAssertEqual(verdict.answer.exceptions.map(\.position), [1, 2])
        XCTAssertEqual(verdict.answer.exceptions[0].decision, .feedback(reason: "Unregistered", timestampMillis: 1000))
        XCTAssertEqual(verdict.answer.exceptions[1].decision, .retry(reason: "failTokens", detail: "Honor listed the token as failed"))
    }

    func testACodeAsAStringReadsTheSame() {
        XCTAssertEqual(classify(200, #"{"code":"200","data":{}}"#).answer.decision, .delivered)
    }

    func testAnExpiredAccessTokenIsRenewedAndResent() {
        XCTAssertEqual(classify(200, #"{"code":401,"message":"token expired"}"#).answer.decision, .renewAndResend(reason: "401"))
        XCTAssertEqual(classify(401, "").answer.decision, .renewAndResend(reason: "HTTP401"))
    }

    func testOverTheRateIsRetriedAndLowersTheRate() {
        for (status, body) in [(429, ""), (503, "busy"), (200, #"{"code":429}"#)] {
            let answer = classify(status, body, retryAfter: "2").answer
            XCTAssertTrue(answer.overRate, "\(status) \(body)")
            guard case .retry(_, let notBefore, _, _) = answer.decision else { return XCTFail("\(answer.decision)") }
            XCTAssertEqual(notBefore, 2000)
        }
    }

    func testAPermissionRefusedPausesTheApp() {
        XCTAssertEqual(classify(200, #"{"code":403,"message":"no right"}"#).answer.decision, .credentialRefused(reason: "403"))
    }

    func testServerErrorsAreRetriedAndOtherCodesDeadLetterTheMessage() {
        XCTAssertEqual(classify(200, #"{"code":500,"message":"internal"}"#).answer.decision, .retry(reason: "500", detail: "internal"))
        XCTAssertEqual(classify(200, #"{"code":400,"message":"bad ttl"}"#).answer.decision, .deadLetter(reason: "400", detail: "bad ttl"))
    }

    func testAnAnswerWithoutACodeIsNeverTakenAsDelivered() {
        XCTAssertEqual(classify(200, "ok").answer.decision, .retry(reason: "HTTP200", detail: "an answer without an Honor code"))
        XCTAssertEqual(classify(502, "<html>").answer.decision, .retry(reason: "HTTP502"))
        XCTAssertEqual(classify(404, "<html>").answer.decision, .credentialRefused(reason: "NotHonor: HTTP 404 without an Honor answer"))
    }
}
