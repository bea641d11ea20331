import PushCore
import XCTest

/// A worker's part of an app's fleet-wide rate: lanes spend the permits it holds and ring the refiller when short;
/// it asks for a batch ahead of the lanes, gives up what nobody asked for in a second, and carries an over-rate
/// answer to the fleet.
final class FleetRateShareTests: XCTestCase {
    private func grant(requests: Int = 0, tokens: Int = 0, requestsPerSecond: Int? = 200, tokensPerSecond: Int? = nil) -> FleetRateGrant {
        FleetRateGrant(requests: requests, tokens: tokens, waitMillis: 0, requestsPerSecond: requestsPerSecond, tokensPerSecond: tokensPerSecond)
    }

    func testLanesSpendThePermitsHeldAndRingOnceWhenShort() {
        let rings = Locked(0)
        let share = FleetRateShare(key: "xiaomi:a", requestsPerSecond: 200, tokensPerSecond: nil) { rings.withLock { $0 += 1 } }
        XCTAssertEqual(share.take(tokensWanted: 5), .unshared, "until the fleet's budget answers, the lane keeps the rate itself")
        share.deposit(grant(requests: 2), carriedOverRate: false)
        XCTAssertEqual(share.take(tokensWanted: 5), .go(tokens: 5), "a requests limit leaves the batch whole")
        XCTAssertEqual(share.take(tokensWanted: 1), .go(tokens: 1))
        XCTAssertEqual(share.take(tokensWanted: 1), .wait)
        XCTAssertEqual(share.take(tokensWanted: 1), .wait)
        XCTAssertEqual(rings.withLock { $0 }, 1, "one ring for a shortage, however many lanes find it")
        XCTAssertEqual(share.wanted(now: 1_000)?.requests, 4, "a batch: a fiftieth of 200 a second")
    }

    func testABatchIsAskedForBeforeTheLanesRunOutAndNothingWhileTheyDoNotAsk() {
        let share = FleetRateShare(key: "xiaomi:a", requestsPerSecond: 1000, tokensPerSecond: nil)
        share.deposit(grant(requests: 20, requestsPerSecond: 1000), carriedOverRate: false)
        XCTAssertNil(share.wanted(now: 1_000), "nobody asked")
        for _ in 0..<11 { _ = share.take(tokensWanted: 1) }
        XCTAssertEqual(share.wanted(now: 2_000)?.requests, 11, "down to under half a batch while lanes send: topped up")
        XCTAssertNil(share.wanted(now: 500_000_000), "nothing asked since; the held permits keep for a second")
        XCTAssertEqual(share.take(tokensWanted: 1), .go(tokens: 1))
        _ = share.wanted(now: 600_000_000)
        XCTAssertNil(share.wanted(now: 1_700_000_000), "a second without a grant asked for")
        XCTAssertEqual(share.take(tokensWanted: 1), .wait, "what was held is given up: never spent later on top of the fleet's rate")
    }

    func testATokensLimitWaitsForTheWholeBatchCappedAtTheFleetsSecond() {
        let share = FleetRateShare(key: "huawei:a", requestsPerSecond: nil, tokensPerSecond: 6000)
        share.deposit(grant(tokens: 120, requestsPerSecond: nil, tokensPerSecond: 6000), carriedOverRate: false)
        XCTAssertEqual(share.take(tokensWanted: 1000), .wait, "a batch of 1,000 waits for its tokens, not a trickle")
        XCTAssertEqual(share.wanted(now: 1)?.tokens, 880)
        share.deposit(grant(tokens: 880, requestsPerSecond: nil, tokensPerSecond: 500), carriedOverRate: false)
        XCTAssertEqual(share.take(tokensWanted: 1000), .go(tokens: 500), "the fleet's rate was lowered: a second of it")
    }

    func testAnOverRateAnswerGivesUpWhatIsHeldAndRidesTheNextExchange() {
        let share = FleetRateShare(key: "xiaomi:a", requestsPerSecond: 200, tokensPerSecond: nil)
        share.deposit(grant(requests: 4), carriedOverRate: false)
        share.overRate()
        XCTAssertEqual(share.take(tokensWanted: 1), .wait)
        let request = share.wanted(now: 1)
        XCTAssertEqual(request?.overRate, true)
        share.deposit(grant(requests: 0, requestsPerSecond: 100), carriedOverRate: true)
        XCTAssertEqual(share.wanted(now: 2)?.overRate, false, "counted once")
        XCTAssertEqual(share.fleetRates.requestsPerSecond, 100)
    }

    func testAnUnreachableBudgetPutsTheLanesBackOnTheirOwnRate() {
        let share = FleetRateShare(key: "xiaomi:a", requestsPerSecond: 200, tokensPerSecond: nil)
        XCTAssertTrue(share.unreachable(), "news: log it")
        XCTAssertFalse(share.unreachable(), "the same again: not news")
        share.deposit(grant(requests: 4), carriedOverRate: false)
        XCTAssertTrue(share.isShared)
        XCTAssertTrue(share.unreachable())
        XCTAssertEqual(share.take(tokensWanted: 1), .unshared)
    }
}
