import Foundation
import PushCore
import RedisClient
import TestSupport
import XCTest

/// `interrupt()` ends a call waiting on a silent Redis (a partition: nothing answers, nothing closes) now,
/// rather than at the 5 s socket timeout, and the calls queued behind it too; later calls work as usual.
/// How shutdown keeps its bound whatever Redis does.
final class InterruptTests: XCTestCase {
    func testAnInterruptEndsTheWaitingCallsAndTheConnectionRecovers() async throws {
        let redis = try RedisServer()
        defer { redis.kill() }
        let proxy = try BlackholeProxy(targetPort: redis.port)
        defer { proxy.stop() }
        let connection = RedisConnection(url: RedisURL(host: "127.0.0.1", port: proxy.port), name: "interrupted")
        addTeardownBlock { await connection.close() }
        try await assertEqual(try await connection.execute(["PING"]).string, "PONG")
        proxy.blackhole()
        let started = ContinuousClock.now
        async let waiting = Result(catching: { try await connection.execute(["PING"]) })
        async let queued = Result(catching: { try await connection.execute(["PING"]) })
        try await Task.sleep(for: .milliseconds(300))
        connection.interrupt()
        let results = await [waiting, queued]
        let took = ContinuousClock.now - started
        for result in results {
            if case .success(let reply) = result { XCTFail("a silent Redis cannot have answered: \(reply)") }
        }
        XCTAssertLessThan(took, .seconds(3), "both ended at the interrupt, not at the 5 s socket timeout (each)")
        proxy.heal()
        var reply: RedisReply?
        try await eventually { reply = try? await connection.execute(["PING"]); return reply != nil }
        XCTAssertEqual(reply?.string, "PONG", "the next call connects again")
    }
}

extension Result where Failure == Error {
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
