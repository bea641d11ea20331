@testable import FCMProvider
import Foundation
import PushCore
@testable import ProviderKit
import ProviderTesting
@testable import Pusher
import TestSupport
import XCTest

/// The scheduler's time-driven policy (retry backoff, request deadlines, service holds, expiry, the credential
/// pause) on a clock the test moves: a real `Scheduler` over a `ScriptedDriver`, stepped a turn at a time, so
/// that "not before" and "once due" are checked to the millisecond without waiting.
final class SchedulerClockTests: XCTestCase {
    private let clock = ManualTransportClock()
    private let driver = ScriptedDriver()
    private let box = ResolutionBox()

    private func scheduler(_ adjust: (inout TransportSettings) -> Void = { _ in }) throws -> Scheduler {
        var settings = TransportSettings(baseURL: "https://push.invalid")
        settings.clock = clock
        settings.initialActiveRequests = 100
        settings.maxActiveRequests = 100
        settings.requestTimeoutMillis = 10_000
        settings.retry.baseDelayMillis = 1000
        settings.retry.maxDelayMillis = 1000
        adjust(&settings)
        let scheduler = try Scheduler(settings: settings, service: FakeService(), driver: driver, sink: box.append)
        addTeardownBlock { scheduler.abort() }
        return scheduler
    }

    private func job(_ tokens: [String], expiration: Int64 = 0) -> PushJob {
        let headers = PushHeaders(topic: "com.example.chat", appTopic: "com.example.chat", pushType: "alert",
                                  priority: 10, expiration: expiration, collapseID: nil)
        return PushJob(message: PushMessage(seq: 1, id: "m1", kind: .private, uuid: nil, headers: headers,
                                            payload: Array(#"{"aps":{"alert":"hi"}}"#.utf8), tokens: tokens,
                                            enqueuedAtMillis: nil))
    }

    /// Moves the clock, then lets the scheduler's loop come round once.
    private func advance(_ duration: Duration, file: StaticString = #filePath, line: UInt = #line) {
        clock.advance(by: duration)
        driver.step(file: file, line: line)
    }

    func testARetryStartsOnlyOnceItsBackoffIsDue() throws {
        // Base and ceiling both 1000 ms: the jitter's floor is never below the base, so each backoff is 1000 ms.
        let scheduler = try scheduler()
        scheduler.submit([job([token("a1", 1)])])
        driver.step()
        XCTAssertEqual(driver.starts.count, 1)
        let answeredAt = clock.uptimeNanoseconds()
        driver.answer(driver.starts[0].id, status: 503)
        driver.step()
        advance(.milliseconds(999))
        XCTAssertEqual(driver.starts.count, 1, "no retry before its backoff is due")
        advance(.milliseconds(1))
        XCTAssertEqual(driver.starts.count, 2, "retried once it is due")
        XCTAssertEqual(driver.starts[1].at, answeredAt + 1_000_000_000, "started at the clock's time")
        driver.answer(driver.starts[1].id, status: 503)
        driver.step()
        advance(.milliseconds(999))
        XCTAssertEqual(driver.starts.count, 2, "the second retry waits its backoff too")
        advance(.milliseconds(1))
        XCTAssertEqual(driver.starts.count, 3)
        XCTAssertTrue(box.all.isEmpty, "retries spend attempts, not outcomes")
    }

    func testARetryAfterIsWaitedToTheMillisecond() throws {
        let scheduler = try scheduler()
        scheduler.submit([job([token("a1", 1)])])
        driver.step()
        driver.answer(driver.starts[0].id, status: 503, retryAfter: "3000")
        driver.step()
        advance(.milliseconds(2999))
        XCTAssertEqual(driver.starts.count, 1, "never sooner than the server asked")
        advance(.milliseconds(1))
        XCTAssertEqual(driver.starts.count, 2, "and started once it is due")
        driver.answer(driver.starts[1].id, status: 200)
        driver.step()
        let results = box.all
        XCTAssertEqual(results.map(\.outcome), [.delivered])
    }

    func testARequestOnTheWirePastItsTimeoutIsGivenUpAndRetried() throws {
        let scheduler = try scheduler { $0.requestTimeoutMillis = 1000 }
        scheduler.submit([job([token("a1", 1)])])
        driver.step()
        let first = try XCTUnwrap(driver.starts.first)
        advance(.milliseconds(1000))
        XCTAssertEqual(driver.cancelled, [], "on the wire for exactly the timeout: still waited for")
        // The deadline scan runs every 50 ms of the clock.
        advance(.milliseconds(50))
        XCTAssertEqual(driver.cancelled, [first.id], "past the timeout: given up")
        XCTAssertEqual(driver.starts.count, 1, "and retried after its backoff, not at once")
        advance(.milliseconds(1000))
        XCTAssertEqual(driver.starts.count, 2, "retried once the backoff passed")
        XCTAssertEqual(driver.starts[1].token, first.token)
        driver.answer(driver.starts[1].id, status: 200)
        driver.step()
        XCTAssertEqual(box.all.map(\.outcome), [.delivered], "one outcome: the timed-out attempt left none")
    }

    func testAHoldStartsNothingUntilItEndsAndIsCappedAtAnHour() throws {
        let scheduler = try scheduler()
        scheduler.submit([job([token("a1", 1)])])
        driver.step()
        // The service asks for a day; the lane holds an hour at most.
        driver.answer(driver.starts[0].id, status: 429, retryAfter: "86400000")
        driver.step()
        scheduler.submit([job([token("a1", 2)])])
        driver.step()
        XCTAssertEqual(driver.starts.count, 1, "a new request waits for the hold too")
        advance(.milliseconds(3_599_999))
        XCTAssertEqual(driver.starts.count, 1, "nothing starts before the hour is over")
        advance(.milliseconds(1))
        XCTAssertEqual(Set(driver.starts.dropFirst().map(\.token)), [token("a1", 1), token("a1", 2)],
                       "both start once the hour is over, not the day asked")
    }

    func testAnExpiredNotificationIsNotSentAgain() throws {
        let scheduler = try scheduler()
        let expiration = clock.wallSeconds() + 2
        scheduler.submit([job([token("a1", 1)], expiration: expiration)])
        driver.step()
        XCTAssertEqual(driver.starts.count, 1, "sent while it has not expired")
        driver.answer(driver.starts[0].id, status: 503)
        driver.step()
        advance(.seconds(3))
        XCTAssertEqual(driver.starts.count, 1, "its retry came due after it expired: not sent")
        XCTAssertEqual(box.all.map(\.outcome), [.failed(reason: "Expired", status: nil, attempts: 1)])
    }

    func testTheCredentialPauseLetsOneProbeOutOnlyWhenDue() throws {
        let scheduler = try scheduler {
            $0.credentialProbeFirstMillis = 1000
            $0.credentialProbeLongestMillis = 4000
        }
        let tokens = (1...3).map { token("a1", $0) }
        scheduler.submit([job(tokens)])
        driver.step()
        XCTAssertEqual(driver.starts.count, 3)
        for start in driver.starts { driver.answer(start.id, status: 403) }
        driver.step()
        advance(.milliseconds(999))
        XCTAssertEqual(driver.starts.count, 3, "paused: nothing starts before the first probe is due")
        advance(.milliseconds(1))
        XCTAssertEqual(driver.starts.count, 4, "one probe once due")
        advance(.milliseconds(5000))
        XCTAssertEqual(driver.starts.count, 4, "one probe at a time, however long its answer takes")
        driver.answer(driver.starts[3].id, status: 403)
        driver.step()
        advance(.milliseconds(1999))
        XCTAssertEqual(driver.starts.count, 4, "a refused probe doubles the pause")
        advance(.milliseconds(1))
        XCTAssertEqual(driver.starts.count, 5, "the next probe once the doubled pause passed")
        driver.answer(driver.starts[4].id, status: 200)
        driver.step()  // the answer ends the pause...
        driver.step()  // ...and the next turn starts the rest
        XCTAssertEqual(driver.starts.count, 7)
        XCTAssertTrue(box.all.allSatisfy { $0.outcome == .delivered }, "a paused app dead-letters nothing")
    }

    /// docs/vendors.md: an expired or rejected credential is renewed and the request sent again without spending an attempt;
    /// the same again at once pauses the app. Rejected after each of its free re-sends, the request waits for the
    /// pause's probe, not for a dead letter (one attempt allowed: spending it would end the token).
    func testACredentialRejectedAgainAfterRenewalsPausesTheAppInsteadOfSpendingAttempts() throws {
        let scheduler = try scheduler { $0.retry.maxAttempts = 1 }
        scheduler.submit([job([token("c1", 1)])])
        driver.step()
        for resend in 0...Scheduler.freeResendsInARow {
            guard driver.starts.count == resend + 1 else {
                return XCTFail("re-send \(resend) did not go at once: \(driver.starts.count) starts")
            }
            driver.answer(driver.starts[resend].id, status: 401)
            // One turn takes the answer, the next starts what it put back (no time passes).
            driver.step()
            driver.step()
        }
        XCTAssertEqual(driver.starts.count, Scheduler.freeResendsInARow + 1, "then held: the app pauses")
        XCTAssertTrue(box.all.isEmpty, "nothing dead-lettered")
        advance(.milliseconds(999))
        XCTAssertEqual(driver.starts.count, Scheduler.freeResendsInARow + 1)
        advance(.milliseconds(1))
        XCTAssertEqual(driver.starts.count, Scheduler.freeResendsInARow + 2, "the pause's probe")
        driver.answer(driver.starts.last!.id, status: 200)
        driver.step()
        XCTAssertEqual(box.all.map(\.outcome), [.delivered])
    }
}
