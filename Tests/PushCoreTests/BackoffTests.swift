import XCTest
@testable import PushCore

/// The one backoff every retry loop uses: its bounds hold for every attempt number, including absurd ones.
final class BackoffTests: XCTestCase {
    /// The shapes the callers use: request retries (equal jitter), Redis reconnects (down by a quarter),
    /// FCM token renewals (down by a fifth), HTTP/2 reconnects and TRYAGAIN waits (no jitter).
    private let shapes = [
        Backoff(baseMillis: 200, maxMillis: 30_000, lowestPercent: 50),
        Backoff(baseMillis: 100, maxMillis: 5_000, lowestPercent: 75),
        Backoff(baseMillis: 1_000, maxMillis: 30_000, lowestPercent: 80),
        Backoff(baseMillis: 100, maxMillis: 5_000, lowestPercent: 100),
        Backoff(baseMillis: 1, maxMillis: Int.max, lowestPercent: 0),
        Backoff(baseMillis: Int.max / 3, maxMillis: Int.max, lowestPercent: 50),
    ]

    func testEveryDelayIsWithinBaseAndMaxForAnyAttempt() {
        let attempts = Array(-3...80) + [1_000, Int.max / 2, Int.max - 1, Int.max, Int.min]
        for backoff in shapes {
            for attempt in attempts {
                for _ in 0..<20 {
                    let delay = backoff.delayMillis(attempt: attempt)
                    XCTAssertGreaterThanOrEqual(delay, backoff.baseMillis, "\(backoff) attempt \(attempt)")
                    XCTAssertLessThanOrEqual(delay, backoff.maxMillis, "\(backoff) attempt \(attempt)")
                }
            }
        }
    }

    func testTheCeilingDoublesUpToTheMaxAndTheDelayFollowsIt() {
        let backoff = Backoff(baseMillis: 100, maxMillis: 5_000, lowestPercent: 100)
        XCTAssertEqual((1...9).map { backoff.delayMillis(attempt: $0) }, [100, 200, 400, 800, 1600, 3200, 5000, 5000, 5000])
        let jittered = Backoff(baseMillis: 200, maxMillis: 30_000, lowestPercent: 50)
        XCTAssertEqual(jittered.delayMillis(attempt: 1), 200, "the first delay is the base: half of it would be below")
        for attempt in 2...12 {
            let ceiling = jittered.ceilingMillis(attempt: attempt)
            XCTAssertEqual(ceiling, min(30_000, 200 << (attempt - 1)))
            for _ in 0..<50 {
                XCTAssert((ceiling / 2...ceiling).contains(jittered.delayMillis(attempt: attempt)))
            }
        }
    }

    func testNextGrowsUntilTheMaxAndResetStartsOver() {
        var backoff = Backoff(baseMillis: 50, maxMillis: 2_000, lowestPercent: 75)
        var ceilings: [Int] = []
        for _ in 0..<10 {
            let delay = backoff.next()
            let ceiling = backoff.ceilingMillis(attempt: backoff.attempts)
            XCTAssert((max(50, ceiling * 3 / 4)...ceiling).contains(delay), "\(delay) for ceiling \(ceiling)")
            ceilings.append(ceiling)
        }
        XCTAssertEqual(ceilings, [50, 100, 200, 400, 800, 1600, 2000, 2000, 2000, 2000])
        backoff.reset()
        XCTAssertEqual(backoff.next(), 50)
    }

    func testAMaxBelowTheBaseWinsAndNegativeBoundsAreZero() {
        XCTAssertEqual(Backoff(baseMillis: 500, maxMillis: 100, lowestPercent: 50).delayMillis(attempt: 3), 100)
        XCTAssertEqual(Backoff(baseMillis: -5, maxMillis: -1, lowestPercent: 50).delayMillis(attempt: 3), 0)
        XCTAssertEqual(Backoff(baseMillis: 0, maxMillis: 1_000, lowestPercent: 50).delayMillis(attempt: 30), 0)
    }
}
