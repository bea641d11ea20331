@testable import Pusher
import XCTest

final class ConcurrencyLimiterTests: XCTestCase {
    private let period: UInt64 = 50_000_000

    func testSlowStartDoublesWhileAnswersStayFastAndOnlyWhenWorkWaits() {
        var limiter = ConcurrencyLimiter()
        limiter.limit = 1
        var now: UInt64 = 1
        var limits: [Int] = []
        for _ in 0..<5 {
            limiter.observe(latencyMicros: 2_000)
            now += period
            limits.append(limiter.update(now: now, demand: true, maximum: 2000))
        }
        XCTAssertEqual(limits, [2, 4, 8, 16, 32])
        limiter.observe(latencyMicros: 2_000)
        XCTAssertEqual(limiter.update(now: now + period, demand: false, maximum: 2000), 32, "no growth without waiting work")
    }

    func testQueueingShrinksTheLimitInProportionAndNeverBelowTheMinimum() {
        var limiter = ConcurrencyLimiter()
        limiter.limit = 400
        limiter.latencyFloorMicros = 50_000  // a 500 ms request timeout
        var now: UInt64 = 1
        limiter.observe(latencyMicros: 20_000)  // the best: 20 ms, so the target is 50 ms
        now += period
        _ = limiter.update(now: now, demand: true, maximum: 2000)
        // Then answers take 100 ms (queued behind a one-stream connection): at most halved per update.
        var limit = 0
        for _ in 0..<12 {
            limiter.observe(latencyMicros: 100_000)
            now += period
            limit = limiter.update(now: now, demand: true, maximum: 2000)
        }
        XCTAssertEqual(limit, limiter.minimum)
        // Latency under the floor (a tenth of the timeout) is never cut back, whatever the best was.
        limiter.observe(latencyMicros: 45_000)
        XCTAssertGreaterThan(limiter.update(now: now + period, demand: true, maximum: 2000), limiter.minimum)
    }
}
