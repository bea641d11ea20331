import AndroidPushKit
import Foundation
import ProviderKit
import PushCore
import PushEmulator
import Pusher
import TestSupport
@testable import VivoProvider
import XCTest

/// vivo's lanes against the emulator's vivo side, built as the worker builds them: the signed auth call, one token a
/// send, a list body saved once per job and pushed to up to 1,000 regIds, each token settled once.
final class VivoSchedulerTests: XCTestCase {
    static let topic = "com.example.chat"
    static let appID = "10004"
    static let appKey = "vivo-app-key"
    static let appSecret = "vivo-app-secret"

    private var server: EmulatorStandIn!
    private let box = ResolutionBox()
    private var caches: [AccessTokenCache] = []

    override func setUp() async throws {
        server = try await EmulatorStandIn {
            $0.vendorPort = 0
            $0.vivo.apps = [.init(appID: Self.appID, appKey: Self.appKey, appSecret: Self.appSecret)]
        }
    }

    override func tearDown() async throws {
        for cache in caches { await cache.shutdown() }
        await server?.stop()
    }

    private var vivo: VivoSide { server.emulator.vivo }

    private func lane(http2: Bool = true, requestTimeoutMillis: Int = 10_000) throws -> Scheduler {
        var settings = VivoSettings()
        settings.endpoint = server.emulator.vendorEndpoint
        settings.caFile = server.caFile
        let app = VivoApp(topic: Self.topic, appID: Self.appID, appKey: Self.appKey, appSecretFile: "unused")
        let endpoint = { (path: String) in TokenEndpoint(uri: settings.endpoint + path, caFile: settings.caFile) }
        let cache = VivoAuth.cache(app: app, appSecret: Secret(Self.appSecret), endpoint: endpoint(VivoAuth.path))
        caches.append(cache)
        var transport = VivoLanes.transportSettings(for: app, settings: settings, rateLimit: VivoLanes.rateLimit(for: app))
        transport.offersHTTP2 = http2
        transport.initialActiveRequests = 2
        transport.requestTimeoutMillis = requestTimeoutMillis
        transport.retry.baseDelayMillis = 20
        transport.retry.maxDelayMillis = 100
        let service = VivoService(app: app, tokens: cache, saveEndpoint: endpoint(VivoService.savePath), quotaDay: .beijingMidnight,
                                  deliveries: AppDeliveryRecord(), metrics: .of(VivoModule.provider))
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

    private func outcome(_ token: String) -> TokenOutcome? { box.all.first { $0.token == token }?.outcome }

    private func sendListsAndASend(http2: Bool) async throws {
        let scheduler = try lane(http2: http2)
        let tokens = (0..<1500).map { $0 % 100 == 3 ? "unregistered-\($0)" : "16000000000\($0)" }
        scheduler.submit([job(tokens), job(["16000000000single"], seq: 2)])
        let arrived = try await box.wait(for: tokens.count + 1)
        XCTAssertEqual(arrived.count, tokens.count + 1)
        await scheduler.finish()
        for token in tokens.filter({ !$0.hasPrefix("unregistered") }) + ["16000000000single"] {
            XCTAssertEqual(outcome(token), .delivered, token)
        }
        for token in tokens where token.hasPrefix("unregistered") {
            guard case .feedback(let reason, _)? = outcome(token) else { return XCTFail("\(token): \(String(describing: outcome(token)))") }
            XCTAssertEqual(reason, "Unregistered")
        }
        XCTAssertEqual(vivo.stats.requests, 3, "two list pushes (1,000 + 500) of one saved body, and one send")
        XCTAssertTrue(vivo.stats.duplicates.isEmpty)
        XCTAssertEqual(vivo.stats.delivered(classification: "IM"), vivo.stats.delivered, "the chat category on every one")
        XCTAssertEqual(vivo.stats.accessTokensIssued, 1)
    }

    func testListsAndASendOverHTTP2() async throws { try await sendListsAndASend(http2: true) }

    func testListsAndASendOverHTTP1() async throws { try await sendListsAndASend(http2: false) }

    /// A list push vivo took but answered too late is sent again with the same requestId: vivo answers it as before and
    /// no device gets it twice.
    func testATimedOutListPushIsSentAgainWithTheSameRequestID() async throws {
        vivo.updateFaults { $0.latencyMillis = 2000 }
        let scheduler = try lane(requestTimeoutMillis: 300)
        let tokens = (0..<10).map { "16000000000late\($0)" }
        scheduler.submit([job(tokens)])
        // The first push reached vivo; its answer comes after the lane has given up on it.
        try await eventually(timeout: .seconds(20)) { self.vivo.stats.requests >= 1 }
        vivo.updateFaults { $0.latencyMillis = 0 }
        let arrived = try await box.wait(for: tokens.count)
        XCTAssertEqual(arrived.count, tokens.count)
        await scheduler.finish()
        XCTAssertTrue(box.all.allSatisfy { $0.outcome == .delivered })
        XCTAssertGreaterThanOrEqual(vivo.stats.requests, 2, "sent again after the timeout")
        XCTAssertEqual(vivo.stats.deliveredByToken, Dictionary(uniqueKeysWithValues: tokens.map { ($0, 1) }),
                       "the same requestId: vivo delivered each once")
    }
}
