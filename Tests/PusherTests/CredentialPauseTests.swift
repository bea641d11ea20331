@testable import Pusher
import XCTest

/// The pause an app enters while APNs refuses its credential: held, probed one request at a time, the
/// probe interval doubling to a ceiling, ended by any answer that shows APNs authenticated the request.
final class CredentialPauseTests: XCTestCase {
    let second: UInt64 = 1_000_000_000

    func testUnpausedStartsEverything() {
        let pause = CredentialPause()
        XCTAssertEqual(pause.allowance(now: 0, active: 500), Int.max)
        XCTAssertNil(pause.waitNanos(now: 0))
    }

    func testARefusalHoldsEverythingUntilTheFirstProbe() {
        var pause = CredentialPause(firstNanos: second, longestNanos: 8 * second)
        XCTAssertTrue(pause.refused(now: 10 * second), "the first refusal starts the pause")
        XCTAssertFalse(pause.refused(now: 10 * second), "requests already in flight change nothing")
        XCTAssertEqual(pause.allowance(now: 10 * second, active: 0), 0)
        XCTAssertEqual(pause.waitNanos(now: 10 * second), second)
        XCTAssertEqual(pause.allowance(now: 11 * second, active: 3), 0, "the probe waits for the requests in flight")
        XCTAssertEqual(pause.allowance(now: 11 * second, active: 0), 1, "then one probe")
        pause.probeStarted()
        XCTAssertEqual(pause.allowance(now: 20 * second, active: 1), 0, "only one probe at a time")
        XCTAssertNil(pause.waitNanos(now: 20 * second), "waiting for the probe's answer, not a timer")
    }

    func testRefusedProbesDoubleThePauseUpToTheLongest() {
        var pause = CredentialPause(firstNanos: second, longestNanos: 4 * second)
        _ = pause.refused(now: 0)
        var now: UInt64 = 0
        var lengths: [UInt64] = []
        for _ in 0..<4 {
            now = pause.resumeAt
            XCTAssertEqual(pause.allowance(now: now, active: 0), 1)
            pause.probeStarted()
            _ = pause.refused(now: now)
            lengths.append((pause.resumeAt - now) / second)
        }
        XCTAssertEqual(lengths, [2, 4, 4, 4])
    }

    func testAnHTTPAnswerEndsThePauseAndATransportErrorRetriesTheProbe() {
        var pause = CredentialPause(firstNanos: second, longestNanos: 4 * second)
        _ = pause.refused(now: 0)
        pause.probeStarted()
        XCTAssertFalse(pause.answered(status: nil, now: 2 * second), "a timeout proves nothing")
        XCTAssertTrue(pause.paused)
        XCTAssertEqual(pause.allowance(now: 2 * second, active: 0), 0)
        XCTAssertEqual(pause.allowance(now: 3 * second, active: 0), 1, "probed again after the same interval")
        pause.probeStarted()
        XCTAssertTrue(pause.answered(status: 410, now: 3 * second), "a 410 means the request was authenticated")
        XCTAssertFalse(pause.paused)
        XCTAssertEqual(pause.allowance(now: 3 * second, active: 100), Int.max)
        XCTAssertTrue(pause.refused(now: 4 * second), "a new refusal starts a new pause from the first interval")
        XCTAssertEqual(pause.resumeAt, 5 * second)
    }

    func testTheStatesAndTheirTransitions() {
        var pause = CredentialPause(firstNanos: second, longestNanos: 4 * second)
        XCTAssertEqual(pause.state, .sending)
        XCTAssertFalse(pause.answered(status: nil, now: 0), "an answer while sending changes nothing")
        pause.probeStarted()
        XCTAssertEqual(pause.state, .sending, "no probe while sending")
        XCTAssertTrue(pause.refused(now: 10 * second))
        XCTAssertEqual(pause.state, .paused(resumeAt: 11 * second, lengthNanos: second))
        XCTAssertFalse(pause.refused(now: 10 * second))
        XCTAssertFalse(pause.answered(status: nil, now: 10 * second))
        XCTAssertEqual(pause.state, .paused(resumeAt: 11 * second, lengthNanos: second), "in-flight requests change nothing")
        pause.probeStarted()
        XCTAssertEqual(pause.state, .probing(lengthNanos: second))
        pause.probeStarted()
        XCTAssertEqual(pause.state, .probing(lengthNanos: second), "still the one probe")
        XCTAssertFalse(pause.refused(now: 12 * second))
        XCTAssertEqual(pause.state, .paused(resumeAt: 14 * second, lengthNanos: 2 * second), "a refused probe doubles")
        pause.probeStarted()
        XCTAssertFalse(pause.answered(status: nil, now: 15 * second))
        XCTAssertEqual(pause.state, .paused(resumeAt: 17 * second, lengthNanos: 2 * second),
                       "a probe without an answer: the same length again")
        pause.probeStarted()
        XCTAssertTrue(pause.answered(status: 200, now: 18 * second))
        XCTAssertEqual(pause.state, .sending)
    }
}
