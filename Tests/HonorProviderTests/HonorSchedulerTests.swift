import Foundation
@testable import HonorProvider
import ProviderKit
import PushCore
import PushEmulator
import Pusher
import TestSupport
import XCTest

/// Honor's lanes against the emulator's Honor side, built as the worker builds them: a real OAuth exchange, h2 or
/// HTTP/1.1 by ALPN, lists of up to 1,000 tokens, each token's outcome from the answer.
final class HonorSchedulerTests: XCTestCase {
    static let topic = "com.example.chat"
    static let appID = "104123456"
    static let clientID = "104123456-client"
    static let secret = "honor-client-secret-Zm9v"

    private var server: EmulatorStandIn!
    private let box = ResolutionBox()
    private var caches: [AccessTokenCache] = []

    override func setUp() async throws {
        server = try await EmulatorStandIn {
            $0.vendorPort = 0
            $0.honor.apps = [.init(appID: Self.appID, clientID: Self.clientID, clientSecret: Self.secret)]
        }
    }

    override func tearDown() async throws {
        for cache in caches { await cache.shutdown() }
        await server?.stop()
    }

    private var honor: HonorSide { server.emulator.honor }

    private func lane(http2: Bool, concurrent: Int = 2) throws -> Scheduler {
        let directory = makeTemporaryDirectory("honor")
        let secretFile = directory + "/secret.txt"
        try (Self.secret + "\n").write(toFile: secretFile, atomically: true, encoding: .utf8)
        let endpoint = server.emulator.vendorEndpoint
        var settings = HonorSettings()
        settings.endpoint = endpoint
        settings.tokenURI = endpoint + "/auth/token"
        settings.caFile = server.caFile
        let app = HonorApp(topic: Self.topic, appID: Self.appID, clientID: Self.clientID, clientSecretFile: secretFile)
        let credentials = try ClientCredentials.load(clientID: app.clientID, clientIDKey: "client_id", secretFile: secretFile)
        let cache = HonorAccessTokens.cache(credentials: credentials,
                                            endpoint: TokenEndpoint(uri: settings.tokenURI, caFile: settings.caFile), name: app.topic)
        caches.append(cache)
        var transport = HonorLanes.transportSettings(for: app, settings: settings, rateLimit: HonorLanes.rateLimit(for: app))
        transport.offersHTTP2 = http2
        transport.initialActiveRequests = concurrent
        transport.retry.baseDelayMillis = 20
        transport.retry.maxDelayMillis = 100
        let service = HonorService(app: app, tokens: cache, deliveries: AppDeliveryRecord(), metrics: .of(HonorModule.provider))
        let scheduler = try Scheduler(settings: transport, service: service, sink: box.append)
        cache.wakeOnChange([scheduler])
        addTeardownBlock { scheduler.abort() }
        return scheduler
    }

    private func job(_ tokens: [String], seq: UInt64 = 1) -> PushJob {
        let headers = PushHeaders(topic: Self.topic, appTopic: Self.topic, pushType: "", priority: 10, expiration: nil, collapseID: nil)
        return PushJob(message: PushMessage(seq: seq, id: "m\(seq)", kind: .private, uuid: nil, headers: headers,
                                            payload: Array(#"{"notification":{"title":"Alice","body":"hi"},"data":{"cid":"c1"}}"#.utf8),
                                            tokens: tokens, enqueuedAtMillis: nil))
    }

    /// 1,500 tokens, every 100th expired: two requests, each live token delivered once in the chat class, each
    /// expired one feedback, one outcome per token.
    private func sendFifteenHundred(http2: Bool) async throws {
        let scheduler = try lane(http2: http2)
        let tokens = (0..<1500).map { $0 % 100 == 7 ? "expired-\($0)" : "HonorToken\($0)-AbCdEf" }
        scheduler.submit([job(tokens)])
        let arrived = try await box.wait(for: tokens.count)
        XCTAssertEqual(arrived.count, tokens.count)
        await scheduler.finish()
        XCTAssertEqual(honor.stats.requests, 2, "1,000 + 500")
        let live = tokens.filter { !$0.hasPrefix("expired") }
        XCTAssertEqual(honor.stats.deliveredByToken, Dictionary(uniqueKeysWithValues: live.map { ($0, 1) }), "every live token once")
        XCTAssertEqual(honor.stats.delivered(classification: "NORMAL"), live.count, "the chat importance on every one")
        XCTAssertEqual(honor.stats.accessTokensIssued, 1)
        let outcomes = Dictionary(grouping: box.all, by: \.token)
        XCTAssertEqual(outcomes.count, tokens.count, "one outcome per token")
        for token in tokens {
            let outcome = try XCTUnwrap(outcomes[token]?.first?.outcome)
            if token.hasPrefix("expired") {
                guard case .feedback(let reason, _) = outcome else { return XCTFail("\(token): \(outcome)") }
                XCTAssertEqual(reason, "Unregistered")
            } else {
                XCTAssertEqual(outcome, .delivered, token)
            }
        }
        let request = try XCTUnwrap(honor.stats.lastRequest)
        XCTAssertEqual(request.path, "/api/v1/\(Self.appID)/sendMessage")
        XCTAssertNotNil(request.headers.first { $0.name == "timestamp" }, "Honor's timestamp header")
    }

    func testAThousandTokensARequestOverHTTP2() async throws {
        try await sendFifteenHundred(http2: true)
    }

    func testAThousandTokensARequestOverHTTP1() async throws {
        try await sendFifteenHundred(http2: false)
    }

    /// An access token Honor no longer takes: renewed and the request sent again, no attempt spent, nothing lost.
    func testARejectedAccessTokenIsRenewedAndTheRequestSentAgain() async throws {
        let scheduler = try lane(http2: true)
        scheduler.submit([job(["HonorToken-a", "HonorToken-b"])])
        _ = try await box.wait(for: 2)
        honor.accessTokens.revokeAll()
        scheduler.submit([job(["HonorToken-c"], seq: 2)])
        let arrived = try await box.wait(for: 3)
        XCTAssertEqual(arrived.count, 3)
        await scheduler.finish()
        XCTAssertTrue(box.all.allSatisfy { $0.outcome == .delivered })
        XCTAssertGreaterThanOrEqual(honor.stats.count(code: "401"), 1)
        XCTAssertEqual(honor.stats.accessTokensIssued, 2, "renewed once")
        XCTAssertTrue(honor.stats.duplicates.isEmpty)
    }
}
