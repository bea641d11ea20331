@testable import APNsProvider
import Foundation
import Logging
import PushCore
import Pusher
import TestSupport
import XCTest

/// Certificate auth and several apps in one Pusher, against the emulator requiring client certificates.
final class CredentialTests: XCTestCase {
    var server: EmulatorStandIn!
    var certificates: (ca: String, pem: String, p12: String)!
    var keyFile: String!

    override func setUp() async throws {
        let directory = makeTemporaryDirectory("certs")
        certificates = try generateClientCertificate(in: directory, password: "s3cret")
        keyFile = try generateP8Key(in: directory)
        server = try await EmulatorStandIn(clientCA: certificates.ca)
    }

    override func tearDown() async throws { await server.stop() }

    private func job(topic: String, tokens: [String], seq: UInt64) -> PushJob {
        let headers = PushHeaders(topic: topic, appTopic: topic, pushType: "alert", priority: 10, expiration: 0, collapseID: nil)
        return PushJob(message: PushMessage(seq: seq, id: "m\(seq)", kind: .private, uuid: nil, headers: headers,
                                            payload: Array(#"{"aps":{"alert":"hi"}}"#.utf8), tokens: tokens, enqueuedAtMillis: nil))
    }

    private func settings(apps: [APNsApp]) -> APNsSettings {
        var settings = APNsSettings()
        settings.endpoint = .custom(server.endpoint)
        settings.caFile = server.caFile
        settings.apps = apps
        settings.connections = 2
        return settings
    }

    private func push(_ settings: APNsSettings, _ jobs: [PushJob], expecting count: Int) async throws -> [Resolution] {
        var retry = RetrySettings()
        retry.maxAttempts = 1
        let box = ResolutionBox()
        let pusher = try Pusher(providers: [APNsModule(settings: settings)], retry: retry, logger: Logger(label: "test"), sink: box.append)
        let (input, feed) = AsyncStream.makeStream(of: [PushJob].self)
        feed.yield(jobs)
        feed.finish()
        await pusher.run(input: input)
        return try await box.wait(for: count)
    }

    func testPEMAndPKCS12ClientCertificatesAndTokenAuthAppsSideBySide() async throws {
        let apps = [
            APNsApp(topic: "com.example.pem", credential: .certificate(file: certificates.pem, password: "")),
            APNsApp(topic: "com.example.p12", credential: .certificate(file: certificates.p12, password: "s3cret")),
        ]
        let results = try await push(settings(apps: apps), [
            job(topic: "com.example.pem", tokens: [token("a1", 1)], seq: 1),
            job(topic: "com.example.p12", tokens: [token("a1", 2)], seq: 2),
        ], expecting: 2)
        XCTAssertEqual(results.sorted { $0.seq < $1.seq }.map(\.outcome), [.delivered, .delivered])
        XCTAssertEqual(Set(server.answered().map(\.token)), [token("a1", 1), token("a1", 2)])
    }

    /// One batch for several lanes: two apps of two lanes each, and a topic no app has. Each job reaches its
    /// own app's lanes exactly once; the stray one is dead-lettered, and the others still go.
    func testABatchForSeveralLanesAndAnUnknownTopicIsSplitWithNothingLostOrDoubled() async throws {
        var settings = settings(apps: [
            APNsApp(topic: "com.example.pem", credential: .certificate(file: certificates.pem, password: "")),
            APNsApp(topic: "com.example.p12", credential: .certificate(file: certificates.p12, password: "s3cret")),
        ])
        settings.transportThreads = 2
        let results = try await push(settings, [
            job(topic: "com.example.pem", tokens: [token("b1", 1)], seq: 1),
            job(topic: "com.example.unknown", tokens: [token("b1", 2)], seq: 2),
            job(topic: "com.example.p12", tokens: [token("b1", 3)], seq: 3),
            job(topic: "com.example.pem", tokens: [token("b1", 4), token("b1", 5)], seq: 4),
            job(topic: "com.example.p12", tokens: [token("b1", 6)], seq: 6),
        ], expecting: 6)
        let bySeqAndToken = Dictionary(grouping: results) { "\($0.seq)/\($0.token)" }
        XCTAssertEqual(bySeqAndToken.count, 6, "one outcome per token")
        for result in results {
            if result.seq == 2 {
                guard case .failed(let reason, _, _, _) = result.outcome else { return XCTFail("expected a dead letter") }
                XCTAssertTrue(reason.hasPrefix("TopicNotConfigured"), reason)
            } else {
                XCTAssertEqual(result.outcome, .delivered, "seq \(result.seq)")
            }
        }
        let answered = server.answered()
        XCTAssertEqual(answered.count, 5, "each deliverable token sent once")
        XCTAssertEqual(Set(answered.map(\.token)), Set([1, 3, 4, 5, 6].map { token("b1", $0) }))
    }

    func testAnAppWithoutItsCertificateIsRefusedByTheServer() async throws {
        // Token auth reaches this server without a client certificate: the TLS handshake fails, and the
        // notification is a dead letter, not lost and not "delivered".
        let apps = [APNsApp(topic: "com.example.chat", credential: .token(teamID: "DEF123GHIJ", keyID: "ABC123DEFG", keyFile: keyFile))]
        let results = try await push(settings(apps: apps), [job(topic: "com.example.chat", tokens: [token("a1", 3)], seq: 3)], expecting: 1)
        guard case .failed = results[0].outcome else { return XCTFail("expected a dead letter, got \(results[0].outcome)") }
        XCTAssertTrue(server.answered().isEmpty)
    }

    func testBadCertificateFilesStopTheStart() {
        let apps = [APNsApp(topic: "a.b", credential: .certificate(file: "/nonexistent/cert.p12", password: ""))]
        XCTAssertThrowsError(try Pusher(providers: [APNsModule(settings: settings(apps: apps))], retry: RetrySettings(), logger: Logger(label: "t"), sink: { _ in })) {
            XCTAssertEqual("\($0)", "APNs certificate /nonexistent/cert.p12: file not found or not readable")
        }
        let wrongPassword = [APNsApp(topic: "a.b", credential: .certificate(file: certificates.p12, password: "nope"))]
        XCTAssertThrowsError(try Pusher(providers: [APNsModule(settings: settings(apps: wrongPassword))], retry: RetrySettings(), logger: Logger(label: "t"), sink: { _ in })) {
            XCTAssertEqual("\($0)", "APNs certificate \(self.certificates.p12): not a PKCS#12 file, or the password (cert_password) is wrong")
        }
        let keyOnly = [APNsApp(topic: "a.b", credential: .certificate(file: keyFile, password: ""))]
        XCTAssertThrowsError(try Pusher(providers: [APNsModule(settings: settings(apps: keyOnly))], retry: RetrySettings(), logger: Logger(label: "t"), sink: { _ in })) {
            XCTAssertEqual("\($0)", "APNs certificate \(self.keyFile!): not a PEM certificate")
        }
    }
}
