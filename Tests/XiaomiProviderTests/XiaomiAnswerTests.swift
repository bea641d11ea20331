import Foundation
import ProviderKit
import PushCore
@testable import XiaomiProvider
import XCTest

/// What each MiPush answer means, row by row of the outcome table (docs/vendors.md), read by the service as the scheduler
/// calls it (`classify(status:body:retryAfter:job:tokens:)`).
final class XiaomiAnswerTests: XCTestCase {
    /// 2026-01-01 15:59:59.000 UTC: 23:59:59 in Beijing, a second before Xiaomi's day rolls over.
    static let now: Int64 = 1_767_283_199_000
    private let regIDs = (0..<5).map { "r\($0)" }

    private func classify(status: Int = 200, _ body: String, retryAfter: String? = nil, tokens: RequestTokens = RequestTokens(0, rest: [1, 2, 3, 4]),
                          service: XiaomiService? = nil) throws -> ServiceAnswer {
        let service = try service ?? XiaomiFixtures.service(XiaomiFixtures.app(), wallMillis: { Self.now })
        let context = JobContext(job: XiaomiFixtures.job(payload: "{}", tokens: regIDs))
        return service.classify(status: status, body: Array(body.utf8), retryAfter: retryAfter, job: context, tokens: tokens)
    }

    private static func error(_ code: Int, _ description: String = "错误", _ reason: String = "why") -> String {
        #"{"result":"error","trace_id":"Xlm1","code":\#(code),"description":"\#(description)","reason":"\#(reason)"}"#
    }

    private static func success(bad: String? = nil) -> String {
        let list = bad.map { #","bad_regids":"\#($0)""# } ?? ""
        return #"{"result":"ok","trace_id":"Xlm1","code":0,"data":{"id":"slm1"\#(list)},"description":"成功","info":"Received push messages for 5 REGID"}"#
    }

    private func exceptions(_ answer: ServiceAnswer) -> [Int: ServiceDecision] {
        Dictionary(answer.exceptions.map { ($0.position, $0.decision) }, uniquingKeysWith: { first, _ in first })
    }

    func testSuccessDeliversEveryRegID() throws {
        let answer = try classify(Self.success())
        XCTAssertEqual(answer.decision, .delivered)
        XCTAssertEqual(answer.reason, "")
        XCTAssertTrue(answer.exceptions.isEmpty)
        XCTAssertFalse(answer.overRate)
        // The code as digits in a string, or "ok" without a code: the same.
        XCTAssertEqual(try classify(#"{"result":"ok","code":"0","data":{}}"#).decision, .delivered)
        XCTAssertEqual(try classify(#"{"result":"ok"}"#).decision, .delivered)
    }

    func testBadRegIDsAreFeedbackByTheirPositionInTheRequest() throws {
        let dead = ServiceDecision.feedback(reason: "Unregistered", timestampMillis: Self.now)
        let answer = try classify(Self.success(bad: "r1,r3"))
        XCTAssertEqual(answer.decision, .delivered, "the others are delivered")
        XCTAssertEqual(exceptions(answer), [1: dead, 3: dead])
        // Positions are the request's own order, not the job's.
        let reordered = try classify(Self.success(bad: "r0, r4"), tokens: RequestTokens(4, rest: [2, 0]))
        XCTAssertEqual(exceptions(reordered), [0: dead, 2: dead], "r4 is first and r0 third in this request; spaces trimmed")
        // As an array: the other reading.
        XCTAssertEqual(exceptions(try classify(#"{"result":"ok","code":0,"data":{"bad_regids":["r2"]}}"#)), [2: dead])
        // A regId the request did not carry is no one's outcome.
        XCTAssertTrue(try classify(Self.success(bad: "elsewhere")).exceptions.isEmpty)
    }

    func testEveryRegIDRefusedOnAQuietAppIsDeadLetteredNotFeedbackAndNothingPauses() throws {
        let clock = TestWall(Self.now)
        let service = try XiaomiFixtures.service(XiaomiFixtures.app(), wallMillis: { clock.now })
        let all = try classify(Self.success(bad: "r0,r1,r2,r3,r4"), service: service)
        XCTAssertEqual(Set(all.exceptions.map(\.decision.reason)), [AllTokensRefusedRule.reason],
                       "a wrong region or app must not wipe a user base, nor pause the app")
        XCTAssertEqual(all.exceptions.count, 5)

        XCTAssertEqual(try classify(Self.success(bad: "r0"), service: service).decision, .delivered)
        clock.now += 599_999
        let after = try classify(Self.success(bad: "r0,r1,r2,r3,r4"), service: service)
        XCTAssertEqual(after.decision, .delivered, "the app delivered within 10 minutes: these regIds are dead")
        XCTAssertEqual(Set(after.exceptions.map(\.decision)), [.feedback(reason: "Unregistered", timestampMillis: clock.now)])
        clock.now += 600_000
        XCTAssertEqual(Set(try classify(Self.success(bad: "r0,r1,r2,r3,r4"), service: service).exceptions.map(\.decision.reason)),
                       [AllTokensRefusedRule.reason], "ten quiet minutes later")
    }

    /// 27001: the channel the app's configuration supplies is refused. Every message would meet it: the app pauses
    /// with Xiaomi's words and the key to check. A channel the message's own `xiaomi` object chose is its own problem.
    func testARefusedConfiguredChannelPausesTheAppAndAMessagesOwnChannelIsADeadLetter() throws {
        let service = try XiaomiFixtures.service(XiaomiFixtures.app(channelID: "chat-1"), wallMillis: { Self.now })
        let configured = JobContext(job: XiaomiFixtures.job(payload: #"{"notification":{"title":"t","body":"b"}}"#, tokens: regIDs))
        let answer = service.classify(status: 200, body: Array(Self.error(27001, "channel information mismatch", "x").utf8),
                                      retryAfter: nil, job: configured, tokens: RequestTokens(0))
        guard case .configurationRefused(let reason, let detail) = answer.decision else { return XCTFail("\(answer.decision)") }
        XCTAssertEqual(reason, "27001")
        XCTAssertTrue(detail.contains("channel_id") && detail.contains("chat-1") && detail.contains("mismatch"), detail)
        let own = JobContext(job: XiaomiFixtures.job(payload: #"{"notification":{"title":"t","body":"b"},"xiaomi":{"extra":{"channel_id":"mine"}}}"#,
                                                     tokens: regIDs))
        XCTAssertEqual(service.classify(status: 200, body: Array(Self.error(27001, "channel information mismatch", "x").utf8),
                                        retryAfter: nil, job: own, tokens: RequestTokens(0)).decision,
                       .deadLetter(reason: "27001", detail: "channel information mismatch: x"))
    }

    func testRetryCodes() throws {
        for code in [-1, 1, 10001, 10002, 10003, 10037, 20301, 20607, 22102, 26003, 26004, 65029] {
            let answer = try classify(Self.error(code, "系统错误", "busy"))
            XCTAssertEqual(answer.decision, .retry(reason: String(code), detail: "系统错误: busy"), "\(code)")
            XCTAssertEqual(answer.reason, String(code))
            XCTAssertFalse(answer.overRate, "\(code)")
        }
    }

    func testTooManyCallsRetriesAndLowersTheRate() throws {
        let answer = try classify(Self.error(10027, "调用频率超过限制"))
        XCTAssertEqual(answer.decision, .retry(reason: "10027", detail: "调用频率超过限制: why"))
        XCTAssertTrue(answer.overRate)
    }

    func testTheSpentQuotaWaitsForTheNextXiaomiDay() throws {
        let answer = try classify(Self.error(10034))
        XCTAssertEqual(answer.decision, .quotaSpent(reason: "10034", untilWallMillis: Self.now + 1000), "Beijing midnight")
        XCTAssertEqual(try classify(Self.error(200001)).decision, .quotaSpent(reason: "200001", untilWallMillis: Self.now + 1000))
        // Another day boundary from the settings.
        let app = XiaomiFixtures.app()
        let service = try XiaomiService(app: app, settings: XiaomiSettings(quotaReset: "00:00+00:00", apps: [app]), metrics: .of(XiaomiModule.provider),
                                        wallMillis: { Self.now })
        XCTAssertEqual(try classify(Self.error(10034), service: service).decision,
                       .quotaSpent(reason: "10034", untilWallMillis: 1_767_312_000_000), "2026-01-02 00:00 UTC")
    }

    func testCredentialAndPermissionCodesPauseTheApp() throws {
        for code in [10031, 10036, 21301, 21302, 21303, 22000, 22006, 22007, 22022] {
            let answer = try classify(Self.error(code))
            XCTAssertEqual(answer.decision, .credentialRefused(reason: String(code)), "\(code)")
        }
    }

    func testMessageErrorsAndUnknownCodesAreDeadLetters() throws {
        for code in [10008, 10012, 10016, 10017, 21305, 65009, 65014, 65015, 65036, 99999, 0 - 2] {
            let answer = try classify(Self.error(code, "参数不合法", "title is too long"))
            XCTAssertEqual(answer.decision, .deadLetter(reason: String(code), detail: "参数不合法: title is too long"), "\(code)")
            XCTAssertEqual(answer.reason, String(code))
        }
        // Xiaomi's words are kept printable and short.
        let long = try classify(Self.error(10017, "d", String(repeating: "x", count: 500) + #"\u001b"#))
        guard case .deadLetter(_, let detail?) = long.decision else { return XCTFail("\(long.decision)") }
        XCTAssertLessThan(detail.count, 220)
        XCTAssertFalse(detail.unicodeScalars.contains("\u{1B}"))
    }

    func testHTTPStatusesBesides200() throws {
        let flow = try classify(status: 503, #"{"result":"error","code":503,"description":"Service Unavailable","reason":"Flow control"}"#)
        XCTAssertEqual(flow.decision, .retry(reason: "HTTP503", detail: "Service Unavailable: Flow control"))
        XCTAssertTrue(flow.overRate, "flow control: slower")
        XCTAssertEqual(flow.reason, "HTTP503")
        XCTAssertEqual(try classify(status: 503, "", retryAfter: "7").decision, .retry(reason: "HTTP503", notBeforeMillis: 7000))
        XCTAssertEqual(try classify(status: 503, "", retryAfter: "99999").decision, .retry(reason: "HTTP503", notBeforeMillis: 3_600_000))
        XCTAssertEqual(try classify(status: 503, "", retryAfter: "Wed, 21 Oct 2015 07:28:00 GMT").decision, .retry(reason: "HTTP503"))
        let server = try classify(status: 500, "<html>oops</html>")
        XCTAssertEqual(server.decision, .retry(reason: "HTTP500"))
        XCTAssertFalse(server.overRate)
        XCTAssertTrue(try classify(status: 429, "").overRate)
        XCTAssertEqual(try classify(status: 401, "").decision, .credentialRefused(reason: "HTTP401"), "a static key: nothing to renew")
        XCTAssertEqual(try classify(status: 404, "<html>not found</html>").decision, .retry(reason: "HTTP404"))
        // A MiPush error code under another status is read by its code.
        XCTAssertEqual(try classify(status: 400, Self.error(10017)).decision, .deadLetter(reason: "10017", detail: "错误: why"))
        XCTAssertEqual(try classify(status: 401, Self.error(21301)).decision, .credentialRefused(reason: "21301"))
    }

    func testA200ThatIsNoMiPushAnswerIsRetried() throws {
        for body in ["", "<html>captive portal</html>", #"{"result":"error"}"#, #"{"code":"zero"}"#, #"{"result":"ok","code":0,"data":{"bad_regids":"r1,"#] {
            XCTAssertEqual(try classify(body).decision, .retry(reason: "NotMiPush", detail: "HTTP 200 without a MiPush answer"), body)
        }
    }
}
