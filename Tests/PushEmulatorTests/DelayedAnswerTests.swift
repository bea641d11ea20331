import PushEmulator
import Foundation
import PushCore
import Pusher
import TestSupport
import XCTest

/// Answers after a latency, written in batches per connection (`DelayedAnswers`), seen by a client that sends
/// hundreds of requests at once on one connection (h2_burst_client.py).
final class DelayedAnswerTests: XCTestCase {
    /// Runs h2_burst_client.py against `server` and returns its JSON result.
    private func runBurstClient(_ server: EmulatorStandIn, _ arguments: [String]) async throws -> [String: Any] {
        try await runH2Script("h2_burst_client.py", against: server, arguments)
    }

    /// 800 requests in flight on one connection at a constant 300 ms: every one answered exactly once, none before
    /// its latency, in the order they arrived (the order they fall due); many answers went out per batch.
    func testManyDelayedAnswersAreEachWrittenOnceInOrderOfDueTime() async throws {
        let server = try await EmulatorStandIn { $0.latencyMillis = 300 }
        let result = try await runBurstClient(server, ["--count", "800"])
        let (answers, batches) = (server.emulator.stats.delayedAnswers, server.emulator.stats.delayedAnswerBatches)
        await server.stop()
        let order = result["order"] as? [Int] ?? []
        let counts = result["answers"] as? [String: Int] ?? [:]
        let streams = (0..<800).map { 3 + 2 * $0 }
        XCTAssertEqual(result["errors"] as? [String], [], "\(result["errors"] ?? "")")
        XCTAssertEqual(result["closed"] as? Bool, false)
        XCTAssertEqual(counts.count, 802, "stream 1, the 800 and the last one")
        XCTAssertEqual(counts.values.filter { $0 != 1 }.count, 0, "each answered once")
        XCTAssertEqual(Array(order.dropFirst().prefix(800)), streams, "in order of due time")
        XCTAssertEqual((result["statuses"] as? [String: Int] ?? [:]).values.filter { $0 != 200 }.count, 0)
        XCTAssertGreaterThanOrEqual(result["min_wait_ms"] as? Double ?? 0, 300, "no answer before its latency")
        XCTAssertEqual(answers, 802)
        XCTAssertLessThan(batches, answers, "answers due in the same millisecond go out together")
    }

    /// With jitter the answers come out of arrival order, still each exactly once and none early.
    func testJitteredAnswersAreEachWrittenOnce() async throws {
        let server = try await EmulatorStandIn {
            $0.latencyMillis = 200
            $0.jitterMillis = 100
        }
        let result = try await runBurstClient(server, ["--count", "600"])
        await server.stop()
        let counts = result["answers"] as? [String: Int] ?? [:]
        XCTAssertEqual(result["errors"] as? [String], [], "\(result["errors"] ?? "")")
        XCTAssertEqual(counts.count, 602)
        XCTAssertEqual(counts.values.filter { $0 != 1 }.count, 0, "each answered once")
        XCTAssertGreaterThanOrEqual(result["min_wait_ms"] as? Double ?? 0, 200, "no answer before its latency")
    }

    /// Streams the client resets while their answers wait: those answers are dropped, the others on the connection
    /// (in the same batches) are still written, and the connection goes on serving. Two rounds of 450 under a limit
    /// of 500: had the reset streams kept their slots, the second round would be refused.
    func testStreamsResetBeforeTheirDelayedAnswerDoNotDisturbTheOthers() async throws {
        let server = try await EmulatorStandIn {
            $0.latencyMillis = 300
            $0.maxConcurrentStreams = 500
        }
        let result = try await runBurstClient(server, ["--count", "450", "--reset-every", "3", "--rounds", "2"])
        let stats = server.emulator.stats
        await server.stop()
        let counts = result["answers"] as? [String: Int] ?? [:]
        let reset = Set(result["reset"] as? [Int] ?? [])
        XCTAssertEqual(reset.count, 300)
        XCTAssertEqual(result["errors"] as? [String], [], "\(result["errors"] ?? "")")
        XCTAssertEqual(result["closed"] as? Bool, false)
        XCTAssertEqual(Set(counts.keys.compactMap { Int($0) }).intersection(reset), [], "no answer on a reset stream")
        XCTAssertEqual(counts.count, 1 + 600 + 1, "every other stream answered")
        XCTAssertEqual(counts.values.filter { $0 != 1 }.count, 0, "each answered once")
        XCTAssertEqual(result["last_status"] as? Int, 200, "the connection still serves")
        XCTAssertEqual(stats.refusedStreams, 0, "the reset streams gave their slots back")
    }
}
