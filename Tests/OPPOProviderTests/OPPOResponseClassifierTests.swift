import AndroidPushKit
@testable import OPPOProvider
import ProviderKit
import PushCore
import XCTest

/// OPPO's answers by its code table, each token's outcome.
final class OPPOResponseClassifierTests: XCTestCase {
    private let tokens = ["r1", "r2", "r3", "r4"]

    private func classify(_ body: String, status: Int = 200, count: Int = 4) -> OPPOResponseClassifier.Verdict {
        OPPOResponseClassifier.classify(status: status, body: Array(body.utf8), count: count, tokenAt: { self.tokens[$0] },
                                        nowMillis: 1000, quotaDay: .beijingMidnight)
    }

    func testABatchIsSettledTokenByToken() {
        let answer = classify(#"{"code":0,"data":[{"messageId":"a","registrationId":"r1"},{"messageId":"b","registrationId":"r2","errorCode":10000,"errorMessage":"Invalid RegistrationId"},{"messageId":"c","registrationId":"r3","errorCode":41,"errorMessage":"bad"}]}"#).answer
        XCTAssertEqual(answer.decision, .delivered)
        XCTAssertEqual(answer.exceptions.map(\.position), [1, 2, 3])
        XCTAssertEqual(answer.exceptions[0].decision, .feedback(reason: "Unregistered", timestampMillis: 1000))
        XCTAssertEqual(answer.exceptions[1].decision, .deadLetter(reason: "41", detail: "bad"))
        XCTAssertEqual(answer.exceptions[2].decision, .retry(reason: "NotAnswered", detail: "OPPO's answer had no item for the token"),
                       "a token OPPO did not answer for is sent again")
    }

    func testAUnicastIsDeliveredOrItsTokenDead() {
        XCTAssertEqual(classify(#"{"code":0,"data":{"messageId":"a"}}"#, count: 1).answer.decision, .delivered)
        XCTAssertEqual(classify(#"{"code":10000,"message":"Invalid RegistrationId"}"#, count: 1).answer.decision,
                       .feedback(reason: "Unregistered", timestampMillis: 1000))
    }

    func testCodesByTheTable() {
        XCTAssertTrue(classify(#"{"code":-2}"#).answer.overRate)
        XCTAssertEqual(classify(#"{"code":-1,"message":"busy"}"#).answer.decision, .retry(reason: "-1", detail: "busy"))
        XCTAssertEqual(classify(#"{"code":11}"#).answer.decision, .renewAndResend(reason: "11"))
        XCTAssertEqual(classify(#"{"code":28}"#).answer.decision, .credentialRefused(reason: "28"))
        XCTAssertEqual(classify(#"{"code":33}"#).answer.decision,
                       .quotaSpent(reason: "33", untilWallMillis: QuotaDay.beijingMidnight.nextRollover(afterWallMillis: 1000)))
        guard case .configurationRefused(let reason, _) = classify(#"{"code":67}"#).answer.decision else { return XCTFail() }
        XCTAssertEqual(reason, "67")
        XCTAssertEqual(classify(#"{"code":31,"message":"missing"}"#).answer.decision, .deadLetter(reason: "31", detail: "missing"))
    }

    func testAnAnswerWithoutACodeIsNeverDelivered() {
        XCTAssertEqual(classify("ok").answer.decision, .retry(reason: "HTTP200", detail: "an answer without an OPPO code"))
        XCTAssertEqual(classify("<html>", status: 404).answer.decision, .credentialRefused(reason: "NotOPPO: HTTP 404 without an OPPO answer"))
        XCTAssertEqual(classify("", status: 502).answer.decision, .retry(reason: "HTTP502"))
    }
}
