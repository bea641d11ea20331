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

final class ConcurrencyLimiterSignalTests: XCTestCase {
    private let period: UInt64 = 50_000_000

    /// A limiter that has grown to `maximum` under answers of `latency` (microseconds), and the time reached.
    private func grown(to maximum: Int, latency: Int64, floor: Int64 = 1_000_000) -> (ConcurrencyLimiter, UInt64) {
        var limiter = ConcurrencyLimiter()
        limiter.limit = 1
        limiter.latencyFloorMicros = floor
        var now: UInt64 = 1
        for _ in 0..<40 {
            limiter.observe(latencyMicros: latency)
            now += period
            _ = limiter.update(now: now, demand: true, maximum: maximum)
        }
        return (limiter, now)
    }

    /// 150 ms, steady or jittering by 20 ms, with a request timeout of 500 ms (a latency floor of 50 ms): the
    /// distance, not queueing. The limit stays at what the servers allow.
    func testASteadyRoundTripNeverCutsTheLimit() {
        var (limiter, now) = grown(to: 4000, latency: 150_000, floor: 50_000)
        for step in 0..<200 {
            limiter.observe(latencyMicros: 150_000 + Int64(step % 3) * 10_000)
            now += period
            XCTAssertEqual(limiter.update(now: now, demand: true, maximum: 4000), 4000, "update \(step)")
        }
    }

    /// At the servers' limit the limiter follows it: a connection opened (or a SETTINGS raised) is used at
    /// the next update, a lower limit is kept to, and a higher one used again without starting over.
    func testItFollowsTheServersLimit() {
        var (limiter, now) = grown(to: 1000, latency: 50_000)
        limiter.observe(latencyMicros: 50_000)
        now += period
        XCTAssertEqual(limiter.update(now: now, demand: true, maximum: 2000), 2000)
        limiter.observe(latencyMicros: 50_000)
        now += period
        XCTAssertEqual(limiter.update(now: now, demand: true, maximum: 1000), 1000)
        now += period
        XCTAssertEqual(limiter.update(now: now, demand: false, maximum: 3000), 3000)
    }

    /// Answers that say overload (503, 429), refused streams and timeouts cut the limit in proportion to
    /// their share, at most by half and at most once per round trip; it then grows back while none come.
    func testOverloadSignalsCutTheLimitInProportion() {
        var (limiter, now) = grown(to: 4000, latency: 50_000)
        // A tenth of the answers of a round trip are 503s: a tenth less.
        for index in 0..<1000 {
            limiter.observe(latencyMicros: 50_000)
            if index % 10 == 0 { limiter.observeOverload(answered: true) }
        }
        now += period
        XCTAssertEqual(limiter.update(now: now, demand: true, maximum: 4000), 3600)
        // Refused streams only, no answer: at most half.
        for _ in 0..<100 { limiter.observeOverload(answered: false) }
        now += period
        XCTAssertEqual(limiter.update(now: now, demand: true, maximum: 4000), 1800)
        // More within the same round trip (150 ms now) wait for it to pass: one congestion event, one cut.
        limiter.observe(latencyMicros: 150_000)
        now += period
        let afterSecond = limiter.update(now: now, demand: true, maximum: 4000)
        limiter.observeOverload(answered: false)
        now += period
        XCTAssertEqual(limiter.update(now: now, demand: true, maximum: 4000), afterSecond, "within the round trip: no second cut")
        now += 3 * period
        XCTAssertLessThan(limiter.update(now: now, demand: true, maximum: 4000), afterSecond, "a round trip later: cut")
        // Then quiet answers: it grows again.
        let low = limiter.update(now: now, demand: true, maximum: 4000)
        limiter.observe(latencyMicros: 50_000)
        now += period
        XCTAssertGreaterThan(limiter.update(now: now, demand: true, maximum: 4000), low)
    }
}
