@testable import FCMProvider
import PushCore
@testable import ProviderKit
@testable import Pusher
import TestSupport
import XCTest

/// The access token's life (`AccessTokenLife`) on a clock the test moves: the grant, the renewal moment, a
/// token expiring while the endpoint is down, a refusal's pause, and a rejection reported by many callers.
/// No sleeping: time passes only by `advance(by:)`.
final class AccessTokenStateTests: XCTestCase {
    private let clock = ManualTransportClock()
    private var now: Double { Double(clock.uptimeNanoseconds()) / 1_000_000_000 }
    /// A fixed backoff, so that retry times are known (the cache's own has jitter).
    private let backoff: (Int) -> Double = { _ in 5 }

    /// Starts the first request and grants it a token of `lifetime` seconds.
    private func granted(_ life: inout AccessTokenLife, lifetime: Int64 = 3600) -> AccessToken {
        guard case .ask(let started) = life.next(now: now) else {
            XCTFail("a request should be due: \(life.state)")
            return AccessToken(bearer: "", expiresIn: 0, generation: 0, expiresAt: 0)
        }
        life.granted(bearer: Secret("bearer-\(life.generation + 1)"), expiresIn: lifetime, startedAt: started)
        return life.published.token!
    }

    func testTheFirstRequestIsDueAtOnceAndItsGrantMakesATokenValidFromTheRequest() throws {
        var life = AccessTokenLife()
        XCTAssertEqual(life.view(now: now), .unavailable(reason: AccessTokenLife.firstReason))
        let start = now
        XCTAssertEqual(life.next(now: now), .ask(startedAt: start))
        XCTAssertEqual(life.state, .fetching(reason: AccessTokenLife.firstReason))
        XCTAssertEqual(life.next(now: now), .wait(until: .infinity), "one request at a time")
        clock.advance(by: .seconds(2))  // the answer comes later than the request
        life.granted(bearer: "first", expiresIn: 3600, startedAt: start)
        let token = try XCTUnwrap(life.view(now: now).token)
        XCTAssertEqual(token.generation, 1)
        XCTAssertEqual(token.expiresAt, start + 3600, "timed from the request, not the answer")
        XCTAssertEqual(life.state, .valid(token, renewAt: start + 3300), "renewed when 5 minutes remain")
        XCTAssertEqual(life.requests, 1)
        XCTAssertEqual(life.recentStarts, [start])
    }

    func testAShortLivedTokenIsRenewedAtHalfItsLifeAndStaysInUseWhileRenewing() {
        var life = AccessTokenLife()
        let start = now
        let first = granted(&life, lifetime: 60)
        XCTAssertEqual(life.next(now: now), .wait(until: start + 30), "nothing is due before half its life")
        clock.advance(by: .seconds(29))
        XCTAssertEqual(life.next(now: now), .wait(until: start + 30))
        clock.advance(by: .seconds(1))
        XCTAssertEqual(life.next(now: now), .ask(startedAt: start + 30))
        XCTAssertEqual(life.state, .renewing(first))
        XCTAssertEqual(life.view(now: now), .ready(first), "the old token stays in use meanwhile")
        life.granted(bearer: "second", expiresIn: 60, startedAt: start + 30)
        XCTAssertEqual(life.view(now: now).token?.generation, 2)
        XCTAssertEqual(life.requests, 2)
    }

    func testATokenThatExpiresWhileTheEndpointIsDownIsDroppedAtItsExpiryAndReplacedWhenItIsBack() {
        var life = AccessTokenLife()
        let start = now
        let first = granted(&life, lifetime: 10)
        clock.advance(by: .seconds(5))
        XCTAssertEqual(life.next(now: now), .ask(startedAt: start + 5))
        XCTAssertEqual(life.unavailable(reason: "connection refused", now: now, backoff: backoff), 5)
        XCTAssertEqual(life.state, .valid(first, renewAt: start + 10), "still valid: kept, asked again after the backoff")
        XCTAssertEqual(life.next(now: now), .wait(until: start + 10))
        clock.advance(by: .seconds(4))
        XCTAssertEqual(life.view(now: now), .ready(first), "in use up to its expiry")
        clock.advance(by: .seconds(1))
        // Callers see the expiry at once, before the renewal thread notices it.
        let expired = AccessTokenState.unavailable(
            reason: "the access token expired before a new one could be had (connection refused)")
        XCTAssertEqual(life.view(now: now), expired)
        XCTAssertEqual(life.next(now: now), .expired(expired), "dropped at its expiry")
        XCTAssertNil(life.published.token)
        XCTAssertEqual(life.next(now: now), .ask(startedAt: start + 10), "the pending retry is still due")
        life.granted(bearer: "second", expiresIn: 10, startedAt: start + 10)
        XCTAssertEqual(life.view(now: now).token?.generation, 2)
        XCTAssertNil(life.lastFailure)
        XCTAssertEqual(life.failures, 0)
    }

    func testWithNoTokenAFailureSaysWhyAndWaitsForItsBackoff() {
        var life = AccessTokenLife()
        let start = now
        _ = life.next(now: now)
        XCTAssertEqual(life.unavailable(reason: "HTTP 503.", now: now, backoff: backoff), 5)
        XCTAssertEqual(life.view(now: now), .unavailable(reason: "HTTP 503; asking again in 5 s"))
        XCTAssertEqual(life.next(now: now), .wait(until: start + 5))
        clock.advance(by: .seconds(5))
        XCTAssertEqual(life.next(now: now), .ask(startedAt: start + 5))
    }

    func testARefusalPausesUntilItsRetryTimeThenTheKeyIsAskedAgain() {
        var life = AccessTokenLife()
        let start = now
        _ = granted(&life)
        clock.advance(by: .seconds(3300))
        XCTAssertEqual(life.next(now: now), .ask(startedAt: start + 3300))
        life.refused(reason: "invalid_grant", now: now, retryAfter: 60)
        XCTAssertEqual(life.view(now: now), .refused(reason: "invalid_grant"), "refused even with a token still valid")
        XCTAssertEqual(life.state, .refused(reason: "invalid_grant", retryAt: start + 3360))
        XCTAssertFalse(life.rejected(generation: 1, now: now), "a refusal has no token to reject")
        clock.advance(by: .seconds(59))
        XCTAssertEqual(life.next(now: now), .wait(until: start + 3360), "nothing is asked during the pause")
        clock.advance(by: .seconds(1))
        XCTAssertEqual(life.next(now: now), .ask(startedAt: start + 3360))
        XCTAssertEqual(life.view(now: now), .refused(reason: "invalid_grant"), "the refusal stands while asking again")
        life.refused(reason: "invalid_grant", now: now, retryAfter: 60)
        XCTAssertEqual(life.state, .refused(reason: "invalid_grant", retryAt: start + 3420), "refused again: another pause")
        clock.advance(by: .seconds(60))
        XCTAssertEqual(life.next(now: now), .ask(startedAt: start + 3420))
        life.granted(bearer: "accepted", expiresIn: 3600, startedAt: start + 3420)
        XCTAssertEqual(life.view(now: now).token?.generation, 2, "a grant lifts the refusal")
    }

    func testARevokedTokenReportedManyTimesIsDroppedOnceAndRenewedOnce() {
        var life = AccessTokenLife()
        let start = now
        _ = granted(&life)
        XCTAssertTrue(life.rejected(generation: 1, now: now))
        for _ in 0..<50 { XCTAssertFalse(life.rejected(generation: 1, now: now), "already dropped") }
        XCTAssertEqual(life.view(now: now), .unavailable(reason: AccessTokenLife.rejectedReason))
        XCTAssertEqual(life.next(now: now), .wait(until: start + 1), "no two requests within a second")
        clock.advance(by: .seconds(1))
        XCTAssertEqual(life.next(now: now), .ask(startedAt: start + 1))
        XCTAssertFalse(life.rejected(generation: 1, now: now), "while its successor is asked for")
        life.granted(bearer: "second", expiresIn: 3600, startedAt: start + 1)
        XCTAssertFalse(life.rejected(generation: 1, now: now), "an older token than the one in use")
        XCTAssertEqual(life.next(now: now), .wait(until: start + 1 + 3300))
        XCTAssertEqual(life.requests, 2, "exactly one renewal")
    }

    func testARejectionDuringARenewalIsAnsweredByTheRequestAlreadyOut() {
        var life = AccessTokenLife()
        let start = now
        _ = granted(&life)
        clock.advance(by: .seconds(3300))
        _ = life.next(now: now)
        XCTAssertTrue(life.rejected(generation: 1, now: now))
        XCTAssertEqual(life.state, .fetching(reason: AccessTokenLife.rejectedReason))
        XCTAssertNil(life.view(now: now).token, "the rejected token is no longer used")
        XCTAssertEqual(life.next(now: now), .wait(until: .infinity), "no second request")
        life.granted(bearer: "second", expiresIn: 3600, startedAt: start + 3300)
        XCTAssertEqual(life.requests, 2)
    }

    /// The cache itself on the manual clock: many callers report the same revoked token at once, one renewal.
    func testTheCacheOnAManualClockRenewsARevokedTokenExactlyOnce() async throws {
        let asked = Locked(0)
        let cache = AccessTokenCache(name: "manual", clock: clock) { _ in
            let n = asked.withLock { $0 += 1; return $0 }
            return .granted(accessToken: Secret("token-\(n)"), expiresIn: 3600)
        }
        try await eventually { cache.state.token?.generation == 1 }
        clock.advance(by: .seconds(2))  // past the one-second floor: the renewal may start at once
        let started = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<50 { group.addTask { cache.rejected(generation: 1) } }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        XCTAssertEqual(started, 1)
        try await eventually { cache.state.token?.generation == 2 }
        XCTAssertEqual(cache.requestCount, 2)
        XCTAssertEqual(asked.withLock { $0 }, 2)
        await cache.shutdown()
    }
}
