import Foundation
@testable import HuaweiProvider
import ProviderKit
import PushCore
import XCTest

/// The outcome table (docs/vendors.md), row by row, for Huawei's answers: per-token outcomes from v1's and v3's partial-failure
/// lists (by position in the request), every token refused (feedback here; `AllTokensRefusedRule` decides after), renewals,
/// pauses, retries with flow control marked over the rate, and dead letters with Huawei's code and words.
final class HuaweiClassifierTests: XCTestCase {
    private let now: Int64 = 1_800_000_000_000

    private func classify(status: Int = 200, _ body: String, tokens: [String] = ["t0", "t1", "t2", "t3"]) -> HuaweiResponseClassifier.Verdict {
        HuaweiResponseClassifier.classify(status: status, body: Array(body.utf8), count: tokens.count, tokenAt: { tokens[$0] },
                                          nowMillis: now)
    }

    /// `{"code":..,"msg":..}` with `msg` as a JSON string, as Huawei writes partial failures.
    private func answer(_ code: String, msg: String) -> String {
        let quoted = String(decoding: try! JSONSerialization.data(withJSONObject: [msg], options: []), as: UTF8.self)
        return #"{"code":"\#(code)","msg":\#(quoted.dropFirst().dropLast()),"requestId":"1"}"#
    }

    private func exceptions(_ verdict: HuaweiResponseClassifier.Verdict) -> [Int: ServiceDecision] {
        Dictionary(verdict.answer.exceptions.map { ($0.position, $0.decision) }, uniquingKeysWith: { first, _ in first })
    }

    private var badToken: ServiceDecision { .feedback(reason: "BadDeviceToken", timestampMillis: now) }
    private var unregistered: ServiceDecision { .feedback(reason: "Unregistered", timestampMillis: now) }

    func testSuccessDeliversEveryToken() {
        let verdict = classify(#"{"code":"80000000","msg":"Success","requestId":"1"}"#)
        XCTAssertEqual(verdict.answer.decision, .delivered)
        XCTAssertTrue(verdict.answer.exceptions.isEmpty)
        XCTAssertTrue(verdict.credentialAccepted)
        // A number for a code (unverified reading) is the same code.
        XCTAssertEqual(classify(#"{"code":80000000,"msg":"Success"}"#).answer.decision, .delivered)
    }

    func testV1PartialFailureListsIllegalTokensAsBadDeviceTokenByPosition() {
        let verdict = classify(answer("80100000", msg: #"{"success":2,"failure":2,"illegal_tokens":["t3","t1"]}"#))
        XCTAssertEqual(verdict.answer.decision, .delivered)
        XCTAssertEqual(verdict.answer.reason, "80100000")
        XCTAssertEqual(exceptions(verdict), [1: badToken, 3: badToken])
    }

    func testV3PartialFailureGroupsByReason() {
        let msg = #"{"success":1,"failure":4,"illegalTokens":{"noRight":["t0"],"tokenFormatError":["t1"],"#
            + #""tokenPlatformNotSupport":["t2"],"countryNotSupport":["t3"],"noRight2":["not-in-request"]}}"#
        let verdict = classify(answer("80100000", msg: msg), tokens: ["t0", "t1", "t2", "t3", "t4"])
        XCTAssertEqual(verdict.answer.decision, .delivered)
        XCTAssertEqual(exceptions(verdict), [
            0: unregistered, 1: badToken, 2: unregistered,
            3: .deadLetter(reason: "countryNotSupport", detail: "Huawei listed the token as countryNotSupport"),
        ])
        // The app's own standing told per token pauses the app rather than dead-lettering the message.
        let penalty = classify(answer("80100000", msg: #"{"illegalTokens":{"disableSendHuaweiMsgBecauseOfPenalty":["t2"]}}"#))
        XCTAssertEqual(exceptions(penalty), [2: .credentialRefused(reason: "disableSendHuaweiMsgBecauseOfPenalty")])
    }

    func testATokenListedTwiceInTheRequestGetsItsOutcomeAtEveryPosition() {
        let verdict = classify(answer("80100000", msg: #"{"illegal_tokens":["dup"]}"#), tokens: ["dup", "ok", "dup"])
        XCTAssertEqual(exceptions(verdict), [0: badToken, 2: badToken])
    }

    func testEveryTokenRefusedWhileTheAppDeliversReportsEachToken() {
        let v1 = classify(status: 400, answer("80300007", msg: #"{"success":0,"failure":4,"illegal_tokens":["t0","t1","t2","t3"]}"#))
        XCTAssertEqual(v1.answer.decision, badToken)
        XCTAssertTrue(v1.answer.exceptions.isEmpty)
        let v3 = classify(status: 400, answer("80300007", msg: #"{"failure":4,"illegalTokens":{"noRight":["t0","t2"],"tokenFormatError":["t1","t3"]}}"#))
        XCTAssertEqual(v3.answer.decision, badToken)
        XCTAssertEqual(exceptions(v3), [0: unregistered, 2: unregistered])
        // A v1 80300007 whose msg lists nothing (its msg is undocumented): every token is bad.
        let bare = classify(#"{"code":"80300007","msg":"All the tokens are invalid."}"#)
        XCTAssertEqual(bare.answer.decision, badToken)
        XCTAssertTrue(bare.answer.exceptions.isEmpty)
    }

    func testEveryTokenRefusedNeverPausesTheApp() {
        // Whether the app is quiet is the refusal rule's question, asked after this: here every token is dead.
        let all = classify(status: 400, answer("80300007", msg: #"{"illegal_tokens":["t0","t1","t2","t3"]}"#))
        XCTAssertEqual(all.answer.decision, badToken)
        let listed = classify(answer("80100000", msg: #"{"illegalTokens":{"noRight":["t0","t1","t2","t3"]}}"#))
        XCTAssertEqual(listed.answer.decision, .delivered)
        XCTAssertEqual(exceptions(listed), [0: unregistered, 1: unregistered, 2: unregistered, 3: unregistered])
    }

    func testCredentialRejectionsRenewAndResend() {
        for code in ["80200001", "80200003", "80200005"] {
            let verdict = classify(status: 401, #"{"code":"\#(code)","msg":"Oauth Token expired."}"#)
            XCTAssertEqual(verdict.answer.decision, .renewAndResend(reason: code))
            XCTAssertFalse(verdict.credentialAccepted)
            // The code decides, whatever the status.
            XCTAssertEqual(classify(status: 200, #"{"code":"\#(code)"}"#).answer.decision, .renewAndResend(reason: code))
        }
        XCTAssertEqual(classify(status: 401, "").answer.decision, .renewAndResend(reason: "HTTP401"))
    }

    func testPermissionAndCredentialRefusalsPauseTheApp() {
        for code in ["80300002", "80300013", "80300036", "80300037", "80600003"] {
            XCTAssertEqual(classify(status: 400, #"{"code":"\#(code)","msg":"no"}"#).answer.decision, .credentialRefused(reason: code))
        }
        XCTAssertEqual(classify(status: 404, "<html>Not Found</html>").answer.decision,
                       .credentialRefused(reason: "NotHuawei: HTTP 404 without a Push Kit answer"))
    }

    func testServerErrorsRetryAndFlowControlIsOverTheRate() {
        let flow = classify(status: 503, #"{"code":"503","msg":"Flow control"}"#)
        XCTAssertEqual(flow.answer.decision, .retry(reason: "503", detail: "Flow control"))
        XCTAssertTrue(flow.answer.overRate)
        let bare503 = classify(status: 503, "")
        XCTAssertEqual(bare503.answer.decision, .retry(reason: "HTTP503"))
        XCTAssertTrue(bare503.answer.overRate)
        let internalError = classify(status: 500, #"{"code":"81000001","msg":"System internal error."}"#)
        XCTAssertEqual(internalError.answer.decision, .retry(reason: "81000001", detail: "System internal error."))
        XCTAssertFalse(internalError.answer.overRate)
        XCTAssertEqual(classify(status: 200, #"{"code":"81000001"}"#).answer.decision, .retry(reason: "81000001"))
        XCTAssertEqual(classify(status: 502, "bad gateway").answer.decision, .retry(reason: "HTTP502"))
        XCTAssertEqual(classify(status: 500, #"{"code":"89999999"}"#).answer.decision, .retry(reason: "89999999"))
        // 200 that says nothing: not taken as delivered.
        if case .retry = classify(status: 200, "not json").answer.decision {} else { XCTFail("an unreadable 200 retries") }
    }

    func testMessageErrorsAndUnknownCodesAreDeadLettersWithHuaweisWords() {
        for code in ["80100001", "80100003", "80100004", "80100016", "80300008", "80300010", "80300011", "80100013", "87654321"] {
            let verdict = classify(status: 400, #"{"code":"\#(code)","msg":"Some words.","requestId":"9"}"#)
            XCTAssertEqual(verdict.answer.decision, .deadLetter(reason: code, detail: "Some words."))
            XCTAssertEqual(verdict.answer.reason, code)
            XCTAssertTrue(verdict.credentialAccepted)
        }
        // The server's words are made printable and clipped before they reach a dead letter.
        let long = classify(status: 400, #"{"code":"80100001","msg":"bad\u001b[31m \#(String(repeating: "x", count: 500))"}"#)
        guard case .deadLetter(_, let detail?) = long.answer.decision else { return XCTFail("\(long.answer.decision)") }
        XCTAssertFalse(detail.contains("\u{1b}"))
        XCTAssertTrue(detail.hasSuffix("…"), detail)
        XCTAssertLessThan(detail.count, 220)
    }

    func testMsgAsAnObjectAndIllegalTokensAsAListAreReadToo() {
        let object = classify(#"{"code":"80100000","msg":{"illegal_tokens":["t2"]}}"#)
        XCTAssertEqual(exceptions(object), [2: badToken])
        let list = classify(answer("80100000", msg: #"{"illegalTokens":["t1"]}"#))
        XCTAssertEqual(exceptions(list), [1: badToken])
        // A partial failure whose msg cannot be read: delivered (a resend would duplicate every delivered token).
        let unreadable = classify(#"{"code":"80100000","msg":"{truncated"}"#)
        XCTAssertEqual(unreadable.answer.decision, .delivered)
        XCTAssertTrue(unreadable.answer.exceptions.isEmpty)
    }
}
