@testable import APNsProvider
import Foundation
import PushCore
import ProviderKit
import Pusher
import TestSupport
import XCTest

/// At a real round trip, throughput is requests in flight over the round trip: the scheduler keeps every stream
/// the servers allow busy (not a fixed cap of its own), a steady round trip never cuts it back, and what
/// signals overload (503 answers) does. Our own HTTP/2 sessions against the emulator, answering after a delay.
final class RoundTripConcurrencyTests: XCTestCase {
    private func settings(for server: EmulatorStandIn, connections: Int) -> TransportSettings {
        var settings = TransportSettings(baseURL: server.endpoint)
        settings.caFile = server.caFile
        settings.driver = .nghttp2
        settings.initialConnections = connections
        settings.connections = connections
        settings.retry.maxAttempts = 2
        settings.retry.baseDelayMillis = 5
        settings.retry.maxDelayMillis = 20
        return settings
    }

    private func jobs(_ tokens: [String], seqBase: UInt64) -> [PushJob] {
        let headers = PushHeaders(topic: "com.example.chat", appTopic: "com.example.chat", pushType: "alert",
                                  priority: 10, expiration: 0, collapseID: nil)
        return stride(from: 0, to: tokens.count, by: 1000).map { start in
            let seq = seqBase + UInt64(start)
            return PushJob(message: PushMessage(seq: seq, id: "m\(seq)", kind: .private, uuid: nil, headers: headers,
                                                payload: Array(#"{"aps":{"alert":"hi"}}"#.utf8),
                                                tokens: Array(tokens[start..<min(start + 1000, tokens.count)]), enqueuedAtMillis: nil))
        }
    }

    private func provider(_ server: EmulatorStandIn) throws -> ProviderToken {
        ProviderToken(signer: try JWTSigner(keyFile: server.keyFile, keyID: EmulatorStandIn.keyID, teamID: EmulatorStandIn.teamID))
    }

    /// Four connections of 1,000 streams, every answer after three seconds (long, so that the emulator, built
    /// for debugging and sharing the test's cores, can take them all): the scheduler keeps far more than the
    /// 2,000 requests it used to allow itself in flight. (The emulator then answers later than the three
    /// seconds, queueing, and the limiter rightly sends less: `ConcurrencyLimiterSignalTests` shows that a
    /// steady round trip alone never cuts the limit.)
    func testEveryStreamTheServersAllowIsBusyAtALongRoundTrip() async throws {
        let server = try await EmulatorStandIn {
            $0.maxConcurrentStreams = 1000
            $0.latencyMillis = 3000
        }
        defer { Task { await server.stop() } }
        let box = ResolutionBox()
        // 4,500 requests fill the 4,000 streams once (8,000 did twice). The timeout is far above the three
        // seconds: on a loaded machine the emulator in this process takes its time over 4,000 at once, and a
        // timeout would be retried (a second answer) or, after two, not delivered.
        var settings = settings(for: server, connections: 4)
        settings.requestTimeoutMillis = 120_000
        let transport = try Scheduler(settings: settings, provider: try provider(server), sink: box.append)
        let tokens = (0..<4500).map { token("a1", $0) }
        transport.submit(jobs(tokens, seqBase: 1))
        let results = try await box.wait(for: tokens.count, timeout: 300)
        let seen = transport.requestsInFlight
        let streams = transport.streamsLimit
        await transport.finish()
        XCTAssertEqual(results.filter { $0.outcome != .delivered }.count, 0, server.emulator.stats.json)
        XCTAssertEqual(streams, 4000, "the servers' limits, summed: \(server.emulator.stats.json)")
        XCTAssertGreaterThan(seen.peak, 3000, "requests in flight at most: \(seen); \(server.emulator.stats.json)")
        XCTAssertEqual(server.emulator.stats.refusedStreams, 0, server.emulator.stats.json)
    }

    /// Once every stream is in use, answers of 503 (ServiceUnavailable) make the scheduler send less.
    func testOverloadAnswersMakeItBackOff() async throws {
        let server = try await EmulatorStandIn {
            $0.maxConcurrentStreams = 1000
            $0.latencyMillis = 2000
        }
        defer { Task { await server.stop() } }
        let box = ResolutionBox()
        let transport = try Scheduler(settings: settings(for: server, connections: 2), provider: try provider(server), sink: box.append)
        let good = (0..<4000).map { token("a1", $0) }
        transport.submit(jobs(good, seqBase: 1))
        try await eventually(timeout: .seconds(60)) { transport.requestsInFlight.limit >= 2000 }
        // Tokens the emulator answers with 503, behind the good ones.
        let refused = (0..<2000).map { token("5030", $0) }
        transport.submit(jobs(refused, seqBase: 100_000))
        try await eventually(timeout: .seconds(60)) { transport.requestsInFlight.limit <= 1200 }
        XCTAssertEqual(server.emulator.stats.refusedStreams, 0, server.emulator.stats.json)
        // What is left is answered 503 every time: dropped here (claimed work in a worker; nothing to check).
        transport.abort()
    }
}
