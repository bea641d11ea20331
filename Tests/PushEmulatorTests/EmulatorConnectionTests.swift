import APNsProvider
import PushEmulator
import Foundation
import PushCore
import ProviderKit
import Pusher
import TestSupport
import XCTest

/// The emulator's connection behaviour, seen through the worker's own libcurl transport.
final class EmulatorConnectionTests: XCTestCase {
    private func send(_ count: Int, to server: EmulatorStandIn, connections: Int = 1, attempts: Int = 3,
                      prefix: String = "a1") async throws -> [Resolution] {
        var settings = TransportSettings(baseURL: server.endpoint)
        settings.caFile = server.caFile
        settings.connections = connections
        settings.retry.maxAttempts = attempts
        settings.retry.baseDelayMillis = 5
        settings.retry.maxDelayMillis = 20
        let box = ResolutionBox()
        let provider = ProviderToken(signer: try JWTSigner(keyFile: server.keyFile, keyID: EmulatorStandIn.keyID, teamID: EmulatorStandIn.teamID))
        let transport = try Scheduler(settings: settings, provider: provider, sink: box.append)
        let headers = PushHeaders(topic: "com.example.chat", appTopic: "com.example.chat", pushType: "alert", priority: 10, expiration: 0, collapseID: nil)
        transport.submit([PushJob(message: PushMessage(seq: 1, id: "m", kind: .private, uuid: nil, headers: headers,
                                                      payload: Array(#"{"aps":{"alert":"hi"}}"#.utf8),
                                                      tokens: (0..<count).map { token(prefix, $0) }, enqueuedAtMillis: nil))])
        let results = try await box.wait(for: count, timeout: 30)
        await transport.finish()
        return results
    }

    func testOneStreamUntilAuthenticatedThenMany() async throws {
        let server = try await EmulatorStandIn { $0.latencyMillis = 100 }
        let started = ContinuousClock.now
        let results = try await send(100, to: server)
        XCTAssertEqual(results.filter { $0.outcome == .delivered }.count, 100)
        XCTAssertGreaterThan(server.emulator.stats.peakConcurrentStreams, 10, "the limit rose after the first valid request")
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(5), "100 requests of 100 ms ran concurrently")
        await server.stop()

        let strict = try await EmulatorStandIn { $0.maxConcurrentStreams = 1 }
        let strictResults = try await send(20, to: strict, attempts: 5)
        XCTAssertEqual(strict.emulator.stats.peakConcurrentStreams, 1, "a limit of 1 is enforced")
        XCTAssertEqual(strictResults.filter { $0.outcome == .delivered }.count, 20, "refused streams are retried, not lost")
        await strict.stop()
    }

    func testLatencyIsAddedToEveryAnswer() async throws {
        let server = try await EmulatorStandIn { $0.latencyMillis = 300 }
        let started = ContinuousClock.now
        _ = try await send(1, to: server)
        XCTAssertGreaterThanOrEqual(ContinuousClock.now - started, .milliseconds(300))
        await server.stop()
    }

    func testDroppedConnectionsAreRetriedElsewhere() async throws {
        let server = try await EmulatorStandIn { $0.dropAfterRequests = 20 }
        let results = try await send(30, to: server, attempts: 5)
        XCTAssertEqual(results.filter { $0.outcome == .delivered }.count, 30, "\(results.map(\.outcome))")
        XCTAssertGreaterThan(server.emulator.stats.connections, 1)
        await server.stop()
    }

    /// Runs h2_late_stream_client.py against `server` and returns its JSON result.
    private func runLateStreamClient(_ server: EmulatorStandIn, _ arguments: [String]) async throws -> [String: Any] {
        try await runH2Script("h2_late_stream_client.py", against: server, arguments)
    }

    /// Streams a client resets before their requests are complete give their slots back: with a limit of 2
    /// streams, three cancelled requests must not leave the next one refused. (A stream that ends without an
    /// answer, reset by the client or by NIO for a stream error, used to keep its slot for good.)
    func testCancelledStreamsGiveTheirSlotsBack() async throws {
        let server = try await EmulatorStandIn {
            $0.latencyMillis = 300
            $0.maxConcurrentStreams = 2
        }
        let result = try await runLateStreamClient(server, ["--cancel", "3"])
        await server.stop()
        let streams = result["streams"] as? [String: Any] ?? [:]
        XCTAssertEqual(result["last"] as? Int, 9, "\(result)")
        XCTAssertEqual(streams["9"] as? Int, 200, "answered, not refused: \(result)")
    }

    /// A client whose request left before it saw the emulator's GOAWAY opens a stream above the GOAWAY's last
    /// stream id. That stream is not processed; the streams the GOAWAY covers are still answered.
    /// The emulator used to close the whole connection on that stream's error (and on NIO's failed attempt at a
    /// second GOAWAY), so a request it had accepted lost its answer and the client sent it again: a duplicate.
    func testAStreamOpenedAfterGoawayIsNotProcessedAndTheOthersAreStillAnswered() async throws {
        let server = try await EmulatorStandIn(goawayAfter: 2) { $0.latencyMillis = 500 }
        let result = try await runLateStreamClient(server, ["--gap-ms", "200"])
        let answered = server.answered().map(\.token)
        await server.stop()
        let streams = result["streams"] as? [String: Any] ?? [:]
        XCTAssertEqual(result["goaway_last_stream_id"] as? Int, 5, "\(result)")
        XCTAssertEqual(streams["1"] as? Int, 200, "\(result)")
        XCTAssertEqual(streams["3"] as? Int, 200, "\(result)")
        XCTAssertEqual(streams["5"] as? Int, 200, "accepted before the GOAWAY, so answered: \(result)")
        XCTAssertEqual(result["closed"] as? Bool, false, "open until stream 5 was answered: \(result)")
        XCTAssertNil(streams["7"] as? Int, "above the last stream id: not answered: \(result)")
        XCTAssertEqual(answered.sorted(), [1, 3, 5].map { String(format: "%064x", $0) }, "stream 7 never processed")
    }

    func testDeliveredNotificationsAreRecordedAsJSONLines() async throws {
        let record = makeTemporaryDirectory("record") + "/delivered.jsonl"
        let server = try await EmulatorStandIn { $0.recordFile = record }
        _ = try await send(3, to: server)
        _ = try await send(1, to: server, attempts: 1, prefix: "5030")
        await server.stop()
        let lines = try String(contentsOfFile: record, encoding: .utf8).split(separator: "\n").map { jsonObject(String($0)) }
        XCTAssertEqual(lines.count, 3, "only delivered notifications are recorded")
        XCTAssertEqual(Set(lines.compactMap { $0["token"] as? String }), Set((0..<3).map { token("a1", $0) }))
        XCTAssertEqual(lines.first?["topic"] as? String, "com.example.chat")
        XCTAssertEqual(lines.first?["push_type"] as? String, "alert")
        XCTAssertEqual((lines.first?["payload"] as? [String: Any])?["aps"] as? NSDictionary, ["alert": "hi"])
        XCTAssertEqual(server.emulator.stats.count(reason: "ServiceUnavailable"), 1)
        XCTAssertEqual(server.emulator.stats.count(status: 200), 3)
    }
}
