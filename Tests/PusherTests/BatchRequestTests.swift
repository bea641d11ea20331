import Foundation
import PushCore
@testable import ProviderKit
import ProviderTesting
@testable import Pusher
import TestSupport
import XCTest

/// Requests of many tokens (a service that takes a list, as Huawei and Xiaomi do): the scheduler sends a job's
/// tokens in batches up to the service's limit and reads each token's outcome from the answer; retries, attempts
/// and outcomes stay per token. A real `Scheduler` over a `ScriptedDriver` on a clock the test moves.
final class BatchRequestTests: XCTestCase {
    private let clock = ManualTransportClock()
    private let driver = ScriptedDriver()
    private let box = ResolutionBox()

    private func scheduler(batchLimit: Int = 1000, maxAttempts: Int = 20, maxDelayMillis: Int = 1000,
                           rateLimit: AppRateLimit = .unlimited, service: FakeListService? = nil) throws -> Scheduler {
        var settings = TransportSettings(baseURL: "https://push.invalid")
        settings.clock = clock
        settings.initialActiveRequests = 100
        settings.maxActiveRequests = 100
        settings.retry.baseDelayMillis = 1000
        settings.retry.maxDelayMillis = maxDelayMillis
        settings.retry.maxAttempts = maxAttempts
        settings.rateLimit = rateLimit
        let scheduler = try Scheduler(settings: settings, service: service ?? FakeListService(batchLimit: batchLimit),
                                      driver: driver, sink: box.append)
        addTeardownBlock { scheduler.abort() }
        return scheduler
    }

    private func job(_ tokens: [String], seq: UInt64 = 1) -> PushJob {
        let headers = PushHeaders(topic: "com.example.chat", appTopic: "com.example.chat", pushType: "",
                                  priority: 10, expiration: nil, collapseID: nil)
        return PushJob(message: PushMessage(seq: seq, id: "m\(seq)", kind: .private, uuid: nil, headers: headers,
                                            payload: Array(#"{"notification":{"body":"hi"}}"#.utf8), tokens: tokens,
                                            enqueuedAtMillis: nil))
    }

    private func outcomes() -> [String: [TokenOutcome]] {
        Dictionary(grouping: box.all, by: \.token).mapValues { $0.map(\.outcome) }
    }

    func testOneRequestOfAThousandWithThreeDeadAndTwoBusyTokens() throws {
        let scheduler = try scheduler()
        let tokens = (0..<1000).map { token("b1", $0) }
        scheduler.submit([job(tokens)])
        driver.step()
        XCTAssertEqual(driver.starts.count, 1, "a thousand tokens go in one request")
        XCTAssertEqual(driver.starts[0].tokens, tokens, "in the job's order")

        let dead = [tokens[3], tokens[500], tokens[999]]
        let busy = [tokens[10], tokens[20]]
        driver.answer(driver.starts[0].id, status: 200,
                      body: "dead=\(dead.joined(separator: ","));busy=\(busy.joined(separator: ","))")
        driver.step()
        var seen = outcomes()
        XCTAssertEqual(seen.count, 998, "every token but the two busy ones has its outcome")
        for token in dead { XCTAssertEqual(seen[token], [.feedback(reason: "Unregistered", timestampMillis: 0)]) }
        XCTAssertEqual(seen.values.filter { $0 == [.delivered] }.count, 995)
        for token in busy { XCTAssertNil(seen[token], "a busy token waits for its retry") }

        clock.advance(by: .milliseconds(999))
        driver.step()
        XCTAssertEqual(driver.starts.count, 1, "the retry waits its backoff")
        clock.advance(by: .milliseconds(1))
        driver.step()
        XCTAssertEqual(driver.starts.count, 2)
        XCTAssertEqual(driver.starts[1].tokens, busy, "only the busy tokens are sent again, together")
        driver.answer(driver.starts[1].id, status: 200)
        driver.step()

        seen = outcomes()
        XCTAssertEqual(seen.count, 1000)
        XCTAssertEqual(box.all.count, 1000, "exactly one outcome per token")
        for token in busy { XCTAssertEqual(seen[token], [.delivered]) }
        let sent = driver.starts.flatMap(\.tokens)
        XCTAssertEqual(sent.count, 1002, "nothing delivered was sent again")
        XCTAssertEqual(scheduler.outstanding.load(ordering: .relaxed), 0)
    }

    /// A request whose step before it fails (a vendor's list body that could not be saved) is not sent: its tokens
    /// are settled by the step's answer, here a retry after the backoff, and then sent once, together.
    func testARequestWhosePreparationFailsIsNotSentAndRetriesAsOne() throws {
        let service = FakeListService(batchLimit: 1000)
        service.preparations = [ServiceAnswer(.retry(reason: "SaveFailed"), reason: "SaveFailed")]
        let scheduler = try scheduler(service: service)
        let tokens = (0..<5).map { token("p1", $0) }
        scheduler.submit([job(tokens)])
        driver.step()
        XCTAssertEqual(driver.starts.count, 0, "nothing sent while the step before it failed")
        XCTAssertEqual(service.prepared, [tokens])
        XCTAssertTrue(box.all.isEmpty, "the tokens wait for their retry")
        clock.advance(by: .milliseconds(1000))
        driver.step()
        XCTAssertEqual(driver.starts.map(\.tokens), [tokens], "then sent once, together")
        driver.answer(driver.starts[0].id, status: 200)
        driver.step()
        XCTAssertEqual(box.all.count, 5)
        XCTAssertEqual(box.all.map(\.outcome), Array(repeating: .delivered, count: 5))
    }

    func testAJobIsCutIntoRequestsAtTheServiceLimitAndJobsNeverShareARequest() throws {
        let scheduler = try scheduler()
        let first = (0..<2500).map { token("c1", $0) }
        let second = (0..<3).map { token("c2", $0) }
        scheduler.submit([job(first, seq: 1), job(second, seq: 2)])
        driver.step()
        XCTAssertEqual(driver.starts.map(\.tokens.count), [1000, 1000, 500, 3])
        XCTAssertEqual(driver.starts.prefix(3).flatMap(\.tokens), first, "each token once, in order")
        XCTAssertEqual(driver.starts[3].tokens, second, "a request carries one job's tokens only")
        for start in driver.starts { driver.answer(start.id, status: 200) }
        driver.step()
        XCTAssertEqual(box.all.count, 2503)
        XCTAssertEqual(Set(box.all.map(\.token)).count, 2503)
    }

    func testAFailedRequestRetriesEachOfItsTokensSpendingOneAttemptEach() throws {
        // Two attempts: the 503 spends the first, the second 503 ends every token as a dead letter after 2.
        let scheduler = try scheduler(maxAttempts: 2)
        let tokens = (0..<5).map { token("d1", $0) }
        scheduler.submit([job(tokens)])
        driver.step()
        driver.answer(driver.starts[0].id, status: 503)
        driver.step()
        XCTAssertTrue(box.all.isEmpty, "a retry is no outcome")
        clock.advance(by: .seconds(1))
        driver.step()
        XCTAssertEqual(driver.starts.count, 2)
        XCTAssertEqual(driver.starts[1].tokens, tokens, "the whole request again, as one")
        driver.answer(driver.starts[1].id, status: 503)
        driver.step()
        XCTAssertEqual(box.all.count, 5)
        for resolution in box.all {
            XCTAssertEqual(resolution.outcome, .failed(reason: "ServiceUnavailable", status: 503, attempts: 2))
        }
    }

    func testTheTokensOfARequestThatRetryGoAgainTogetherDespiteTheJitter() throws {
        // A 1-8 s backoff: the first retry waits 1 s exactly, the second a draw of 1-2 s per token.
        let scheduler = try scheduler(maxDelayMillis: 8000)
        let tokens = (0..<100).map { token("g1", $0) }
        scheduler.submit([job(tokens)])
        driver.step()
        driver.answer(driver.starts[0].id, status: 503)
        driver.step()
        clock.advance(by: .seconds(1))
        driver.step()
        XCTAssertEqual(driver.starts.count, 2)
        driver.answer(driver.starts[1].id, status: 503)
        driver.step()
        for _ in 0..<200 {
            clock.advance(by: .milliseconds(10))
            driver.step()
        }
        XCTAssertEqual(driver.starts.count, 3, "one request again, not one per token")
        XCTAssertEqual(driver.starts.last?.tokens, tokens)
    }

    func testARequestPastItsTimeoutRetriesEveryTokenOnce() throws {
        let scheduler = try scheduler()
        let tokens = (0..<4).map { token("e1", $0) }
        scheduler.submit([job(tokens)])
        driver.step()
        clock.advance(by: .milliseconds(10_001))
        driver.step()
        XCTAssertEqual(driver.cancelled, [driver.starts[0].id], "given up at its deadline")
        clock.advance(by: .seconds(1))
        driver.step()
        XCTAssertEqual(driver.starts.count, 2)
        XCTAssertEqual(driver.starts[1].tokens, tokens)
        driver.answer(driver.starts[1].id, status: 200)
        driver.step()
        XCTAssertEqual(box.all.map(\.outcome), Array(repeating: .delivered, count: 4))
    }

    func testAOneTokenServiceSendsARequestPerToken() throws {
        let scheduler = try scheduler(batchLimit: 1)
        scheduler.submit([job((0..<3).map { token("f1", $0) })])
        driver.step()
        XCTAssertEqual(driver.starts.map(\.tokens.count), [1, 1, 1])
    }

    // MARK: the app's rate limit (token buckets as the vendors count)

    func testATokensPerSecondLimitCutsBatchesAndSpacesThem() throws {
        let scheduler = try scheduler(rateLimit: AppRateLimit(requestsPerSecond: nil, tokensPerSecond: 1000))
        let tokens = (0..<2500).map { token("h1", $0) }
        scheduler.submit([job(tokens)])
        driver.step()
        XCTAssertEqual(driver.starts.map(\.tokens.count), [1000], "a second's worth at once, then the rate")
        advance(.milliseconds(999))
        XCTAssertEqual(driver.starts.map(\.tokens.count), [1000], "a batch waits until the bucket holds it all")
        advance(.milliseconds(1))
        XCTAssertEqual(driver.starts.map(\.tokens.count), [1000, 1000])
        advance(.milliseconds(499))
        XCTAssertEqual(driver.starts.map(\.tokens.count), [1000, 1000], "the last 500 wait for 500")
        advance(.milliseconds(1))
        XCTAssertEqual(driver.starts.map(\.tokens.count), [1000, 1000, 500])
        XCTAssertEqual(driver.starts.flatMap(\.tokens), tokens, "every token once, in order")
        for start in driver.starts { driver.answer(start.id, status: 200) }
        driver.step()
        XCTAssertEqual(box.all.count, 2500)
    }

    func testARequestsPerSecondLimitWaitsWithoutSpinning() throws {
        let scheduler = try scheduler(batchLimit: 1, rateLimit: AppRateLimit(requestsPerSecond: 2, tokensPerSecond: nil))
        scheduler.submit([job((0..<5).map { token("i1", $0) })])
        driver.step()
        XCTAssertEqual(driver.starts.count, 2, "the burst: a second's worth")
        advance(.milliseconds(499))
        XCTAssertEqual(driver.starts.count, 2)
        advance(.milliseconds(1))
        XCTAssertEqual(driver.starts.count, 3, "one more each half second")
    }

    func testAnOverRateAnswerLowersTheAppsRateAndRetriesTheRequest() throws {
        let limit = AppRateLimit(requestsPerSecond: 100, tokensPerSecond: nil)
        let scheduler = try scheduler(rateLimit: limit)
        let tokens = (0..<10).map { token("j1", $0) }
        scheduler.submit([job(tokens)])
        driver.step()
        driver.answer(driver.starts[0].id, status: 200, body: "slow")
        driver.step()
        XCTAssertEqual(limit.effectiveRequestsPerSecond, 50, "halved")
        XCTAssertTrue(box.all.isEmpty)
        advance(.seconds(1))
        XCTAssertEqual(driver.starts.last?.tokens, tokens, "the whole request again")
    }

    func testASpentDailyQuotaHoldsTheAppUntilTheDayRollsOverWithoutSpendingAttempts() throws {
        // One attempt: a quota wait that spent it would end every token as a dead letter.
        let scheduler = try scheduler(maxAttempts: 1)
        let tokens = (0..<3).map { token("k1", $0) }
        scheduler.submit([job(tokens)])
        driver.step()
        let rollover = clock.wallMillis() + 3_600_000
        driver.answer(driver.starts[0].id, status: 200, body: "quota until \(rollover)")
        driver.step()
        scheduler.submit([job([token("k2", 0)], seq: 2)])
        advance(.milliseconds(3_599_999))
        XCTAssertEqual(driver.starts.count, 1, "nothing of the app starts before the vendor's day rolls over")
        XCTAssertTrue(box.all.isEmpty, "no outcome: the tokens wait")
        advance(.milliseconds(1))
        XCTAssertEqual(driver.starts.count, 3)
        XCTAssertEqual(Set(driver.starts.dropFirst().map(\.tokens)), [tokens, [token("k2", 0)]],
                       "the same request again, and the app's other work")
        for start in driver.starts.dropFirst() { driver.answer(start.id, status: 200) }
        driver.step()
        XCTAssertEqual(box.all.map(\.outcome), Array(repeating: .delivered, count: 4))
    }

    /// Moves the clock, then lets the scheduler's loop come round once.
    private func advance(_ duration: Duration, file: StaticString = #filePath, line: UInt = #line) {
        clock.advance(by: duration)
        driver.step(file: file, line: line)
    }
}
