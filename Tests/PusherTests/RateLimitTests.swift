@testable import ProviderKit
@testable import Pusher
import PushCore
import XCTest

/// Per-app rate limits for the vendors that count them (Xiaomi requests, Huawei tokens): token buckets exact to
/// the nanosecond on a synthetic clock, batches cut to the tokens in the bucket, the rates halved by over-rate
/// answers (once per spacing, down to a floor) and doubled back after quiet spells. No test sleeps.
final class RateLimitTests: XCTestCase {
    let second: UInt64 = 1_000_000_000
    let millisecond: UInt64 = 1_000_000

    // MARK: TokenBucket

    func testABurstThenRefillsExactToTheNanosecond() {
        var bucket = TokenBucket(rate: 3)
        let start = 5 * second
        XCTAssertEqual(bucket.capacity, 3, "one second's worth")
        XCTAssertEqual(bucket.available(now: start), 3, "starts full")
        bucket.take(3, now: start)
        XCTAssertEqual(bucket.available(now: start), 0)
        // A unit is 1e9 billionths; 3 of them flow in per nanosecond: ceil(1e9 / 3) ns for the first unit.
        XCTAssertEqual(bucket.nanosUntil(1, now: start), 333_333_334)
        XCTAssertEqual(bucket.available(now: start + 333_333_333), 0)
        XCTAssertEqual(bucket.available(now: start + 333_333_334), 1)
        bucket.take(1, now: start + 333_333_334)
        // 2 billionths left over: the second unit needs ceil((1e9 - 2) / 3) = 333,333,333 ns more.
        XCTAssertEqual(bucket.nanosUntil(1, now: start + 333_333_334), 333_333_333)
        XCTAssertEqual(bucket.available(now: start + 666_666_666), 0)
        XCTAssertEqual(bucket.available(now: start + 666_666_667), 1)
        XCTAssertEqual(bucket.nanosUntil(2, now: start + 666_666_667), 333_333_333, "the third unit at exactly 1 s")
        XCTAssertEqual(bucket.available(now: start + second - 1), 1)
        XCTAssertEqual(bucket.available(now: start + second), 2)
        XCTAssertEqual(bucket.available(now: start + 10 * second), 3, "never more than the capacity")
    }

    func testFractionsAreKeptOverManyTinySteps() {
        var bucket = TokenBucket(rate: 3)
        var taken = 0
        var now = 7 * second
        while now <= 17 * second {
            let units = bucket.available(now: now)
            bucket.take(units, now: now)
            taken += units
            now += millisecond
        }
        // 3 a second for 10 s, each read a millisecond apart (3 millionths of a unit each), plus the first burst.
        XCTAssertEqual(taken, 3 + 30)
    }

    func testCapacityBoundsTheBurstAndTakingMoreEmpties() {
        var bucket = TokenBucket(rate: 100, capacity: 10)
        XCTAssertEqual(bucket.available(now: 0), 10)
        bucket.take(25, now: 0)
        XCTAssertEqual(bucket.available(now: 0), 0, "taking more than is there empties the bucket, no debt")
        XCTAssertEqual(bucket.available(now: 50 * millisecond), 5)
        XCTAssertEqual(bucket.available(now: 1_000 * second), 10)
        XCTAssertEqual(bucket.nanosUntil(10, now: 1_000 * second), 0)
        bucket.take(10, now: 1_000 * second)
        XCTAssertEqual(bucket.nanosUntil(50, now: 1_000 * second), 100 * millisecond,
                       "more than the capacity never gathers: the wait is for a full bucket")
        XCTAssertEqual(bucket.nanosUntil(0, now: 1_000 * second), 0)
        XCTAssertEqual(bucket.nanosUntil(-4, now: 1_000 * second), 0)
    }

    func testTimeGoingBackwardsCountsAsNoTime() {
        var bucket = TokenBucket(rate: 3)
        let start = 10 * second
        bucket.take(3, now: start)
        XCTAssertEqual(bucket.available(now: second), 0, "backwards: nothing flows in")
        XCTAssertEqual(bucket.nanosUntil(1, now: start - 100), 333_333_334 + 100,
                       "the wait counts from the time already counted in")
        XCTAssertEqual(bucket.available(now: start + 333_333_333), 0, "the flow resumes from the later time")
        XCTAssertEqual(bucket.available(now: start + 333_333_334), 1)
    }

    func testLoweringTheRateClampsTheContentToTheNewCapacity() {
        var bucket = TokenBucket(rate: 1_000)
        bucket.setRate(100, now: 3 * second)
        XCTAssertEqual(bucket.capacity, 100)
        XCTAssertEqual(bucket.available(now: 3 * second), 100)
        bucket.take(100, now: 3 * second)
        XCTAssertEqual(bucket.nanosUntil(1, now: 3 * second), 10 * millisecond, "at the new rate")
    }

    func testExtremeInputsDoNotTrap() {
        var huge = TokenBucket(rate: .max)
        XCTAssertEqual(huge.capacity, .max)
        XCTAssertEqual(huge.available(now: 0), .max)
        huge.take(.max, now: 0)
        XCTAssertEqual(huge.available(now: 0), 0)
        XCTAssertEqual(huge.nanosUntil(1, now: 0), 1)
        XCTAssertEqual(huge.nanosUntil(.max, now: 0), second, "Int.max units at Int.max a second")
        XCTAssertEqual(huge.available(now: .max), .max, "an enormous jump fills it, no overflow")
        huge.take(.max, now: .max)
        XCTAssertEqual(huge.available(now: 5), 0, "back from UInt64.max: no time passed")
        XCTAssertEqual(huge.nanosUntil(1, now: 5), UInt64.max - 4, "the flow resumes at UInt64.max, 1 ns for a unit")
        XCTAssertEqual(huge.nanosUntil(2, now: 0), UInt64.max, "past UInt64.max: saturated")

        var slow = TokenBucket(rate: 1, capacity: .max)
        slow.take(.max, now: 0)
        XCTAssertEqual(slow.nanosUntil(.max, now: 0), .max, "Int.max seconds is beyond UInt64 nanoseconds")
        XCTAssertEqual(slow.available(now: .max), Int(UInt64.max / second))

        var nonsense = TokenBucket(rate: -5, capacity: 0)
        XCTAssertEqual(nonsense.rate, 1)
        XCTAssertEqual(nonsense.capacity, 1)
        nonsense.take(-3, now: 0)
        XCTAssertEqual(nonsense.available(now: 0), 1, "a negative take takes nothing")
        nonsense.setRate(.min, capacity: .min, now: 0)
        XCTAssertEqual(nonsense.rate, 1)

        let limit = AppRateLimit(requestsPerSecond: .max, tokensPerSecond: .max)
        XCTAssertEqual(limit.grant(tokensWanted: .max, now: .max), .go(tokens: .max))
        XCTAssertEqual(limit.grant(tokensWanted: .max, now: .max), .wait(nanos: second), "a bucketful: a second")
        limit.overRate(now: .max)
        limit.overRate(now: 0)
        XCTAssertEqual(limit.effectiveRequestsPerSecond, Int.max / 2)
        XCTAssertEqual(limit.grant(tokensWanted: -1, now: 3), .go(tokens: 0))
        XCTAssertEqual(limit.effectiveRates(now: .max).tokensPerSecond, Int.max / 2,
                       "the recovery wait starts at UInt64.max: it never ends, and never overflows")
        let zero = AppRateLimit(requestsPerSecond: 0, tokensPerSecond: -7, lowerSpacingNanos: 0, recoveryNanos: 0)
        XCTAssertEqual(zero.requestsPerSecond, 1)
        XCTAssertEqual(zero.grant(tokensWanted: 3, now: 0), .go(tokens: 1))
        zero.overRate(now: 0)
        XCTAssertEqual(zero.effectiveRates(now: 0).tokensPerSecond, 1)
    }

    // MARK: AppRateLimit grants

    func testARequestWaitsUntilTheBucketHoldsItsWholeBatch() {
        let limit = AppRateLimit(requestsPerSecond: nil, tokensPerSecond: 10)
        let start = 2 * second
        XCTAssertEqual(limit.grant(tokensWanted: 7, now: start), .go(tokens: 7))
        XCTAssertEqual(limit.grant(tokensWanted: 7, now: start), .wait(nanos: 400 * millisecond),
                       "3 are left: until 4 more have come, not a request of 3")
        XCTAssertEqual(limit.grant(tokensWanted: 7, now: start + 400 * millisecond - 1), .wait(nanos: 1))
        XCTAssertEqual(limit.grant(tokensWanted: 7, now: start + 400 * millisecond), .go(tokens: 7))
        XCTAssertEqual(limit.grant(tokensWanted: 25, now: start + 1400 * millisecond), .go(tokens: 10),
                       "more than the bucket holds: a bucketful at a time")
        XCTAssertEqual(limit.effectiveRequestsPerSecond, nil)
        XCTAssertEqual(limit.effectiveTokensPerSecond, 10)
    }

    func testARequestsLimitAloneCountsRequestsNotTokens() {
        let limit = AppRateLimit(requestsPerSecond: 2, tokensPerSecond: nil)
        let start = 4 * second
        XCTAssertEqual(limit.grant(tokensWanted: 1_000, now: start), .go(tokens: 1_000), "the batch whole")
        XCTAssertEqual(limit.grant(tokensWanted: 1_000, now: start), .go(tokens: 1_000))
        XCTAssertEqual(limit.grant(tokensWanted: 1, now: start), .wait(nanos: 500 * millisecond))
        XCTAssertEqual(limit.grant(tokensWanted: 1, now: start + 500 * millisecond - 1), .wait(nanos: 1))
        XCTAssertEqual(limit.grant(tokensWanted: 1, now: start + 500 * millisecond), .go(tokens: 1))
        XCTAssertEqual(limit.grant(tokensWanted: 1, now: start + 500 * millisecond), .wait(nanos: 500 * millisecond))
    }

    func testBothLimitsAreChargedAndTheLongerWaitWins() {
        let limit = AppRateLimit(requestsPerSecond: 2, tokensPerSecond: 10)
        let start = 8 * second
        XCTAssertEqual(limit.grant(tokensWanted: 4, now: start), .go(tokens: 4))
        XCTAssertEqual(limit.grant(tokensWanted: 4, now: start), .go(tokens: 4))
        XCTAssertEqual(limit.grant(tokensWanted: 4, now: start), .wait(nanos: 500 * millisecond),
                       "tokens are left (2) but no request")
        // At 0.5 s: 1 request, 2 + 5 = 7 tokens.
        XCTAssertEqual(limit.grant(tokensWanted: 7, now: start + 500 * millisecond), .go(tokens: 7))
        // Both empty: a request in 0.5 s, 2 tokens in 0.2 s; both are needed.
        XCTAssertEqual(limit.grant(tokensWanted: 2, now: start + 500 * millisecond), .wait(nanos: 500 * millisecond))

        let tokensBound = AppRateLimit(requestsPerSecond: 100, tokensPerSecond: 4)
        XCTAssertEqual(tokensBound.grant(tokensWanted: 4, now: start), .go(tokens: 4))
        XCTAssertEqual(tokensBound.grant(tokensWanted: 4, now: start), .wait(nanos: second),
                       "requests are left (99) but not the 4 tokens")

        let bothShort = AppRateLimit(requestsPerSecond: 1, tokensPerSecond: 4)
        XCTAssertEqual(bothShort.grant(tokensWanted: 4, now: start), .go(tokens: 4))
        XCTAssertEqual(bothShort.grant(tokensWanted: 1, now: start), .wait(nanos: second),
                       "a token in 0.25 s, a request in 1 s: the longer")
    }

    func testFollowingTheWaitsSendsExactlyTheRate() {
        // A lane that sleeps for what `.wait` says and asks again, over 10 s of a 7-a-second limit.
        let limit = AppRateLimit(requestsPerSecond: 7, tokensPerSecond: nil)
        var now = 3 * second
        var started = 0
        var waited = false
        while now <= 13 * second {
            switch limit.grant(tokensWanted: 1, now: now) {
            case .go:
                started += 1
                waited = false
            case .wait(let nanos):
                XCTAssertFalse(waited, "a wait ends with a grant: no early wake-up")
                XCTAssertGreaterThan(nanos, 0)
                waited = true
                now += nanos
            }
        }
        XCTAssertEqual(started, 7 + 70, "the burst, then 7 a second, the 70th at 13 s exactly")
    }

    func testABurstAfterAQuietSpellCanReachCapacityPlusRateInOneSecond() {
        // The bucket's limit, pinned here so that a change is deliberate: a vendor counting fixed one-second
        // windows sees up to capacity + rate - 1 in the window of a burst after a quiet spell.
        let limit = AppRateLimit(requestsPerSecond: 10, tokensPerSecond: nil)
        var now = 60 * second
        var inWindow = 0
        while now < 61 * second {
            switch limit.grant(tokensWanted: 1, now: now) {
            case .go: inWindow += 1
            case .wait(let nanos): now += nanos
            }
        }
        XCTAssertEqual(inWindow, 10 + 9)
    }

    func testUnlimitedNeverWaits() {
        let limit = AppRateLimit.unlimited
        XCTAssertTrue(limit.isUnlimited)
        for i in 0..<100_000 {
            XCTAssertEqual(limit.grant(tokensWanted: 1_000, now: UInt64(i)), .go(tokens: 1_000))
        }
        limit.overRate(now: 0)
        XCTAssertEqual(limit.grant(tokensWanted: 1_000, now: 0), .go(tokens: 1_000), "over-rate changes nothing")
        XCTAssertNil(limit.effectiveRequestsPerSecond)
        XCTAssertNil(limit.effectiveTokensPerSecond)
        XCTAssertFalse(AppRateLimit(requestsPerSecond: 5, tokensPerSecond: nil).isUnlimited)
    }

    // MARK: Over-rate answers

    func testOverRateHalvesOnceWithinTheSpacing() {
        let limit = AppRateLimit(requestsPerSecond: 1_000, tokensPerSecond: 4_000)
        let start = 100 * second
        for i in 0..<100 {
            // The requests in flight answering over the rate together, over 990 ms.
            limit.overRate(now: start + UInt64(i) * 10 * millisecond)
        }
        XCTAssertEqual(limit.effectiveRequestsPerSecond, 500)
        XCTAssertEqual(limit.effectiveTokensPerSecond, 2_000)
        limit.overRate(now: start + second - 1)
        XCTAssertEqual(limit.effectiveRequestsPerSecond, 500, "still within a second of the lowering")
        limit.overRate(now: start + second)
        XCTAssertEqual(limit.effectiveRequestsPerSecond, 250, "a second later it halves again")
        XCTAssertEqual(limit.effectiveTokensPerSecond, 1_000)
    }

    func testRepeatedOverRateStopsAtTheFloor() {
        let limit = AppRateLimit(requestsPerSecond: 1_000, tokensPerSecond: 10)
        var rates: [Int] = []
        for i in 0..<10 {
            limit.overRate(now: UInt64(i) * second)
            rates.append(limit.effectiveRequestsPerSecond ?? -1)
        }
        XCTAssertEqual(rates, [500, 250, 125, 62, 62, 62, 62, 62, 62, 62], "a sixteenth of 1,000, rounded down")
        XCTAssertEqual(limit.effectiveTokensPerSecond, 1, "10 / 16 is 0: at least 1 a second")
    }

    func testLoweringEmptiesWhatTheNewCapacityCannotHold() {
        let limit = AppRateLimit(requestsPerSecond: nil, tokensPerSecond: 1_000)
        let start = 9 * second
        limit.overRate(now: start)
        XCTAssertEqual(limit.grant(tokensWanted: 1_000, now: start), .go(tokens: 500),
                       "a full bucket of 1,000 holds at most the new second's worth")
        XCTAssertEqual(limit.grant(tokensWanted: 1_000, now: start), .wait(nanos: second),
                       "500 a second: the next bucketful in a second")
        XCTAssertEqual(limit.grant(tokensWanted: 1, now: start), .wait(nanos: 2 * millisecond), "one in 2 ms")
    }

    func testRecoveryDoublesStepByStepUpToTheConfiguredRate() {
        let limit = AppRateLimit(requestsPerSecond: 1_000, tokensPerSecond: 3_000)
        let start = 50 * second
        for i in 0..<3 { limit.overRate(now: start + UInt64(i) * second) }
        XCTAssertEqual(limit.effectiveRequestsPerSecond, 125)
        XCTAssertEqual(limit.effectiveTokensPerSecond, 375)
        let calm = start + 2 * second
        var steps: [Int?] = []
        for now in [calm + 30 * second - 1, calm + 30 * second, calm + 60 * second - 1, calm + 60 * second,
                    calm + 90 * second, calm + 500 * second] {
            steps.append(limit.effectiveRates(now: now).requestsPerSecond)
        }
        XCTAssertEqual(steps, [125, 250, 250, 500, 1_000, 1_000], "one doubling per 30 s, never above 1,000")
        XCTAssertEqual(limit.effectiveTokensPerSecond, 3_000)
    }

    func testAQuietSpellFoundLateTakesEveryStepItSpans() {
        let limit = AppRateLimit(requestsPerSecond: 16, tokensPerSecond: nil)
        for i in 0..<4 { limit.overRate(now: UInt64(i) * second) }
        XCTAssertEqual(limit.effectiveRequestsPerSecond, 1)
        // Quiet since 3 s: steps due at 33, 63, 93 s (2, 4, 8 a second); at 100 s the rate is 8, the bucket full.
        XCTAssertEqual(limit.grant(tokensWanted: 1, now: 100 * second), .go(tokens: 1))
        XCTAssertEqual(limit.effectiveRequestsPerSecond, 8)
        XCTAssertEqual(limit.effectiveRates(now: 123 * second - 1).requestsPerSecond, 8)
        XCTAssertEqual(limit.effectiveRates(now: 123 * second).requestsPerSecond, 16)
    }

    func testAnOverRateAnswerRestartsTheRecoveryWait() {
        let limit = AppRateLimit(requestsPerSecond: 800, tokensPerSecond: nil)
        limit.overRate(now: 0)
        XCTAssertEqual(limit.effectiveRequestsPerSecond, 400)
        // A late answer within the spacing lowers nothing, but the vendor still refuses: no recovery yet.
        limit.overRate(now: 500 * millisecond)
        XCTAssertEqual(limit.effectiveRequestsPerSecond, 400)
        XCTAssertEqual(limit.effectiveRates(now: 30 * second).requestsPerSecond, 400)
        XCTAssertEqual(limit.effectiveRates(now: 30 * second + 500 * millisecond).requestsPerSecond, 800)
    }

    func testCustomSpacingAndRecovery() {
        let limit = AppRateLimit(requestsPerSecond: 100, tokensPerSecond: nil,
                                 lowerSpacingNanos: 10 * millisecond, recoveryNanos: second)
        limit.overRate(now: 0)
        limit.overRate(now: 10 * millisecond)
        XCTAssertEqual(limit.effectiveRequestsPerSecond, 25)
        XCTAssertEqual(limit.effectiveRates(now: second + 10 * millisecond).requestsPerSecond, 50)
    }

    // MARK: Lanes on several threads

    func testConcurrentGrantsNeverHandOutMoreThanTheTokensBucketHolds() {
        let limit = AppRateLimit(requestsPerSecond: nil, tokensPerSecond: 10_007)
        let totals = grantOnFourThreads(limit, tokensWanted: 3, now: 20 * second)
        XCTAssertEqual(totals.tokens, 10_005, "3,335 grants of 3: as many as the bucket holds, no more")
    }

    func testConcurrentGrantsNeverHandOutMoreThanTheRequestsBucketHolds() {
        let limit = AppRateLimit(requestsPerSecond: 5_003, tokensPerSecond: 50_000)
        let totals = grantOnFourThreads(limit, tokensWanted: 7, now: 20 * second)
        XCTAssertEqual(totals.requests, 5_003)
        XCTAssertEqual(totals.tokens, 5_003 * 7)
    }

    /// 4 threads × 10,000 grants at one fixed `now`; the requests started and tokens granted in total.
    private func grantOnFourThreads(_ limit: AppRateLimit, tokensWanted: Int,
                                    now: UInt64) -> (requests: Int, tokens: Int) {
        let totals = Locked((requests: 0, tokens: 0))
        let group = DispatchGroup()
        for _ in 0..<4 {
            group.enter()
            Thread {
                var requests = 0
                var tokens = 0
                for _ in 0..<10_000 {
                    if case .go(let granted) = limit.grant(tokensWanted: tokensWanted, now: now) {
                        requests += 1
                        tokens += granted
                    }
                }
                totals.withLock { $0.requests += requests; $0.tokens += tokens }
                group.leave()
            }.start()
        }
        group.wait()
        return totals.withLock { $0 }
    }
}
