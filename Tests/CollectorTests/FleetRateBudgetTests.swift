import Collector
import Logging
import PushCore
import QueueProtocol
import RedisClient
import TestSupport
import XCTest

/// An app's rate is the fleet's: the workers draw permits in batches from one budget in a real redis-server, which
/// fills at the configured rate and no faster, holds a second of it, and lowers it for every worker on an over-rate
/// answer. Times are the test's (`nowMillis`), so the arithmetic is exact.
final class FleetRateBudgetTests: RedisTestCase {
    private let share = "xiaomi:com.example.chat"
    private var budget: FleetRateBudget { FleetRateBudget(connection: connection, keys: keys) }

    private func take(_ requests: Int, tokens: Int = 0, overRate: Bool = false, at millis: Int64,
                      requestsPerSecond: Int? = 200, tokensPerSecond: Int? = nil) async throws -> FleetRateGrant {
        try await budget.take(FleetRateRequest(requests: requests, tokens: tokens, overRate: overRate), share: share,
                              requestsPerSecond: requestsPerSecond, tokensPerSecond: tokensPerSecond, nowMillis: millis)
    }

    func testABudgetStartsEmptyFillsAtTheRateAndHoldsATwentiethOfASecond() async throws {
        let start: Int64 = 1_800_000_000_000
        var grant = try await take(10, at: start)
        XCTAssertEqual(grant.requests, 0, "a new budget starts empty: no burst on top of what workers sent on their own")
        XCTAssertEqual(grant.waitMillis, 50, "10 requests at 200 a second")
        XCTAssertEqual(grant.requestsPerSecond, 200)
        grant = try await take(4, at: start + 20)
        XCTAssertEqual(grant.requests, 4)
        grant = try await take(4, at: start + 30)
        XCTAssertEqual(grant.requests, 2, "6 flowed in 30 ms, 4 taken before")
        XCTAssertEqual(grant.waitMillis, 10, "2 more at 200 a second")
        grant = try await take(1000, at: start + 60_000)
        XCTAssertEqual(grant.requests, 10, "a quiet minute fills a twentieth of a second, no more: a one-second window sees the rate and 5%")
        XCTAssertEqual(grant.waitMillis, 50, "what was asked for beyond it comes a bucketful at a time")
        let ttl = try await connection.execute(["PTTL", keys.rateBudget(share: share)]).integer ?? -1
        XCTAssertTrue((1...60_000).contains(ttl), "an unused budget expires: \(ttl)")
    }

    func testWorkersTakingTurnsNeverGetMoreThanTheRateBetweenThem() async throws {
        let start: Int64 = 1_800_000_000_000
        _ = try await take(0, at: start)
        var granted = 0
        // Three workers asking for batches of 4 every 5 ms for 10 s: 200 a second between them, never more.
        for step in 1...2000 {
            granted += try await take(4, at: start + Int64(step) * 5).requests
        }
        XCTAssertEqual(granted, 2000, "10 s at 200 a second")
    }

    func testAnOverRateAnswerHalvesTheFleetsRateOnceASecondAndItRecovers() async throws {
        let start: Int64 = 1_800_000_000_000
        var grant = try await take(0, overRate: true, at: start)
        XCTAssertEqual(grant.requestsPerSecond, 100, "halved")
        grant = try await take(0, overRate: true, at: start + 500)
        XCTAssertEqual(grant.requestsPerSecond, 100, "the requests in flight came back together: one event")
        for second in 1...6 {
            grant = try await take(0, overRate: true, at: start + Int64(second) * 1000)
        }
        XCTAssertEqual(grant.requestsPerSecond, 12, "down to a sixteenth, no lower")
        grant = try await take(1000, at: start + 6000 + 30_000)
        XCTAssertEqual(grant.requestsPerSecond, 25, "30 s without one: doubled")
        XCTAssertEqual(grant.requests, 1, "what flowed at the lowered rate, a twentieth of a second of it")
        grant = try await take(0, at: start + 6000 + 120_000)
        XCTAssertEqual(grant.requestsPerSecond, 200, "back to the configured rate, a step each 30 s")
    }

    func testATokensBudgetGrantsABucketfulAtATimeAndSaysWhenTheNextIsThere() async throws {
        let start: Int64 = 1_800_000_000_000
        _ = try await take(0, at: start, requestsPerSecond: nil, tokensPerSecond: 6000)
        var grant = try await take(0, tokens: 1000, at: start + 100, requestsPerSecond: nil, tokensPerSecond: 6000)
        XCTAssertEqual(grant.tokens, 300, "a twentieth of a second")
        XCTAssertEqual(grant.waitMillis, 50, "the next bucketful at 6,000 a second")
        XCTAssertNil(grant.requestsPerSecond)
        grant = try await take(0, tokens: 700, at: start + 150, requestsPerSecond: nil, tokensPerSecond: 6000)
        XCTAssertEqual(grant.tokens, 300)
    }

    /// The refiller against the real script: lanes come up short, ring, and are supplied; two workers' refillers
    /// between them never hand out more than the budget's rate.
    func testTwoWorkersRefillersShareOneBudget() async throws {
        let clock = ContinuousClock()
        let workers = (0..<2).map { _ in FleetRateShares() }
        let shares = workers.map { $0.share(key: "xiaomi:com.example.chat", requestsPerSecond: 100, tokensPerSecond: nil) }
        let refillers = workers.map {
            FleetRateRefiller(connection: connection, keys: keys, shares: $0, logger: Logger(label: "test"))
        }
        XCTAssertEqual(shares[0].take(tokensWanted: 1), .unshared, "before the first exchange, each worker on its own")
        // The budget is made by the first exchange: what it can have given is counted from before it.
        let started = clock.now
        for refiller in refillers { await refiller.prepare() }
        XCTAssertTrue(shares.allSatisfy(\.isShared))
        let sent = Locked(0)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for refiller in refillers { group.addTask { await refiller.run() } }
            for share in shares {
                group.addTask {
                    // A lane sending as fast as the permits allow, for 2 s of the real clock.
                    while clock.now - started < .seconds(2) {
                        if case .go = share.take(tokensWanted: 1) {
                            sent.withLock { $0 += 1 }
                        } else {
                            try await Task.sleep(for: .milliseconds(2))
                        }
                    }
                }
            }
            try await group.next()
            try await group.next()
            group.cancelAll()
        }
        let elapsed = clock.now - started
        let total = sent.withLock { $0 }
        let most = Int(Double(elapsed.components.seconds) * 100 + Double(elapsed.components.attoseconds) / 1e16) + 1
        XCTAssertLessThanOrEqual(total, most, "the budget starts empty and fills at 100 a second, whoever takes")
        XCTAssertGreaterThan(total, 0, "the lanes were supplied")
    }

    /// A worker that cannot reach Redis keeps to the configured rate on its own (the sends go on), and draws from the
    /// fleet's budget once Redis answers.
    func testAWorkerThatCannotReachRedisKeepsTheRateOnItsOwnUntilItCan() async throws {
        let port = freePort()
        let silent = RedisConnection(url: RedisURL(port: port), name: "unreachable", socketTimeout: .seconds(2))
        addTeardownBlock { await silent.close() }
        let shares = FleetRateShares()
        let share = shares.share(key: share, requestsPerSecond: 100, tokensPerSecond: nil)
        await FleetRateRefiller(connection: silent, keys: keys, shares: shares, logger: Logger(label: "test")).prepare()
        XCTAssertEqual(share.take(tokensWanted: 1), .unshared, "on its own rate: AppRateLimit's buckets")
        await FleetRateRefiller(connection: connection, keys: keys, shares: shares, logger: Logger(label: "test")).prepare()
        XCTAssertTrue(share.isShared)
        XCTAssertEqual(share.take(tokensWanted: 1), .wait, "the fleet's budget, which starts empty")
    }
}
