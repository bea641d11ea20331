import ProviderKit
import PushCore
import XCTest

/// The refusal rule every vendor applies after reading an answer: tokens named dead become `AllTokensRefused` dead
/// letters (never feedback, never a pause) when every token of a request is refused on a quiet app, or when more
/// than half of the app's tokens in a minute are named dead (at least 1,000); otherwise they are feedback.
final class AllTokensRefusedRuleTests: XCTestCase {
    private let now: Int64 = 1_800_000_000_000
    private var dead: ServiceDecision { .feedback(reason: "Unregistered", timestampMillis: now) }

    private func apply(_ answer: ServiceAnswer, count: Int, _ record: AppDeliveryRecord, at millis: Int64? = nil) -> ServiceAnswer {
        AllTokensRefusedRule.apply(answer, count: count, record: record, nowMillis: millis ?? now, service: "Vendor")
    }

    func testEveryTokenRefusedOnAQuietAppIsADeadLetterAndOnADeliveringAppFeedback() {
        let record = AppDeliveryRecord()
        let refused = apply(ServiceAnswer(dead, reason: "x"), count: 3, record)
        XCTAssertEqual(refused.decision.reason, AllTokensRefusedRule.reason)
        guard case .deadLetter = refused.decision else { return XCTFail("\(refused.decision)") }
        // One token of another request delivered: the app is no longer quiet.
        _ = apply(ServiceAnswer(.delivered, reason: "", exceptions: [(1, dead)]), count: 2, record)
        XCTAssertEqual(record.lastDeliveredMillis, now)
        XCTAssertEqual(apply(ServiceAnswer(dead, reason: "x"), count: 3, record, at: now + 1000).decision, dead)
        XCTAssertEqual(apply(ServiceAnswer(dead, reason: "x"), count: 3, record, at: now + AppDeliveryRecord.quietMillis).decision.reason,
                       AllTokensRefusedRule.reason, "quiet again after 10 minutes")
    }

    func testSomeTokensDeadInARequestThatDeliversAreFeedback() {
        let record = AppDeliveryRecord()
        let answer = apply(ServiceAnswer(.delivered, reason: "", exceptions: [(0, dead)]), count: 2, record)
        XCTAssertEqual(answer.exceptions.map(\.decision), [dead])
    }

    func testAFleetDeliveryCountsForAWorkerThatHasNotDeliveredYet() {
        let record = AppDeliveryRecord()
        record.mergeFleetDelivery(atMillis: now - 60_000)
        XCTAssertEqual(apply(ServiceAnswer(dead, reason: "x"), count: 1, record).decision, dead)
    }

    func testMoreThanHalfOfAMinutesTokensNamedDeadIsASurge() {
        let record = AppDeliveryRecord()
        record.delivered(atMillis: now)
        // 900 delivered and 900 dead in requests that each deliver some: below the minimum of 1,000 dead.
        for _ in 0..<9 {
            let answer = apply(ServiceAnswer(.delivered, reason: "", exceptions: (0..<100).map { ($0, dead) }), count: 200, record)
            XCTAssertEqual(answer.exceptions.first?.decision, dead)
        }
        // The next 100 dead make 1,000 of 1,900 answered: the surge holds, and these are dead letters.
        let surge = apply(ServiceAnswer(.delivered, reason: "", exceptions: (0..<100).map { ($0, dead) }), count: 100, record)
        XCTAssertEqual(Set(surge.exceptions.map(\.decision.reason)), [AllTokensRefusedRule.reason])
        // A new minute starts afresh.
        let later = apply(ServiceAnswer(.delivered, reason: "", exceptions: [(0, dead)]), count: 2, record, at: now + 60_000)
        XCTAssertEqual(later.exceptions.map(\.decision), [dead])
    }
}
