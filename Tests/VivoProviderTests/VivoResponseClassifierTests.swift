import AndroidPushKit
import ProviderKit
import PushCore
@testable import VivoProvider
import XCTest

/// vivo's answers, each token's outcome.
final class VivoResponseClassifierTests: XCTestCase {
    private let tokens = ["R1", "R2", "R3", "R4"]

    private func classify(_ body: String, status: Int = 200) -> ServiceAnswer {
        VivoResponseClassifier.classify(status: status, body: Array(body.utf8), count: tokens.count, tokenAt: { self.tokens[$0] },
                                        nowMillis: 1000, quotaDay: .beijingMidnight).answer
    }

    func testAcceptedExceptTheInvalidUsers() {
        let answer = classify(#"{"result":0,"desc":"ok","taskId":"t","invalidUsers":[{"userid":"R2","status":2},{"userid":"R4","status":3}]}"#)
        XCTAssertEqual(answer.decision, .delivered)
        XCTAssertEqual(answer.exceptions.map(\.position), [1, 3])
        XCTAssertEqual(answer.exceptions.map(\.decision), [.feedback(reason: "Unregistered", timestampMillis: 1000),
                                                           .feedback(reason: "Unregistered", timestampMillis: 1000)])
        XCTAssertEqual(classify(#"{"result":0,"invalidUser":{"userid":"R1","status":1}}"#).exceptions.map(\.position), [0],
                       "a send's single invalidUser")
    }

    func testResultsByTheTable() {
        let day = QuotaDay.beijingMidnight.nextRollover(afterWallMillis: 1000)
        XCTAssertEqual(classify(#"{"result":10070,"desc":"over"}"#).decision, .quotaSpent(reason: "10070", untilWallMillis: day))
        XCTAssertEqual(classify(#"{"result":10252}"#).decision, .quotaSpent(reason: "10252", untilWallMillis: day))
        XCTAssertEqual(classify(#"{"result":10302}"#).decision, .feedback(reason: "Unregistered", timestampMillis: 1000))
        XCTAssertEqual(classify(#"{"result":10094}"#).decision, .credentialRefused(reason: "10094"))
        XCTAssertEqual(classify(#"{"result":10206}"#).decision, .renewAndResend(reason: "10206"))
        XCTAssertTrue(classify(#"{"result":10250}"#).overRate)
        guard case .configurationRefused = classify(#"{"result":10097}"#).decision else { return XCTFail() }
        XCTAssertEqual(classify(#"{"result":10055,"desc":"bad title"}"#).decision, .deadLetter(reason: "10055", detail: "bad title"))
        XCTAssertEqual(classify("", status: 500).decision, .retry(reason: "HTTP500"))
        XCTAssertEqual(classify("<html>", status: 404).decision, .credentialRefused(reason: "NotVivo: HTTP 404 without a vivo answer"))
    }
}
