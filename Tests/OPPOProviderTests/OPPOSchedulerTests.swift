import AndroidPushKit
import Foundation
@testable import OPPOProvider
import ProviderKit
import PushCore
import PushEmulator
import Pusher
import TestSupport
import XCTest

/// OPPO's lanes against the emulator's OPPO side, built as the worker builds them: the signed auth call, the token
/// in each form, one token a unicast and up to 1,000 a unicast_batch settled item by item.
final class OPPOSchedulerTests: XCTestCase {
    static let topic = "com.example.chat"
    static let appKey = "oppo-app-key"
    static let masterSecret = "oppo-master-secret"

    private var server: EmulatorStandIn!
    private let box = ResolutionBox()
    private var caches: [AccessTokenCache] = []

    override func setUp() async throws {
        server = try await EmulatorStandIn {
            $0.vendorPort = 0
            $0.oppo.apps = [.init(appKey: Self.appKey, masterSecret: Self.masterSecret)]
        }
    }

    override func tearDown() async throws {
        for cache in caches { await cache.shutdown() }
        await server?.stop()
    }

    private var oppo: OPPOSide { server.emulator.oppo }

    private func lane(http2: Bool = true) throws -> Scheduler {
        var settings = OPPOSettings()
        settings.endpoint = server.emulator.vendorEndpoint
        settings.caFile = server.caFile
        let app = OPPOApp(topic: Self.topic, appKey: Self.appKey, masterSecretFile: "unused")
        let cache = OPPOAuth.cache(appKey: app.appKey, masterSecret: Secret(Self.masterSecret),
                                   endpoint: TokenEndpoint(uri: settings.endpoint + OPPOAuth.path, caFile: settings.caFile), name: app.topic)
        caches.append(cache)
        var transport = OPPOLanes.transportSettings(for: app, settings: settings, rateLimit: OPPOLanes.rateLimit(for: app))
        transport.offersHTTP2 = http2
        transport.initialActiveRequests = 2
        transport.retry.baseDelayMillis = 20
        transport.retry.maxDelayMillis = 100
        let service = OPPOService(app: app, tokens: cache, quotaDay: .beijingMidnight, deliveries: AppDeliveryRecord(),
                                  metrics: .of(OPPOModule.provider))
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

    private func sendBatchesAndAUnicast(http2: Bool) async throws {
        let scheduler = try lane(http2: http2)
        let tokens = (0..<1500).map { $0 % 100 == 3 ? "invalid-\($0)" : "CN_oppo\($0)" }
        scheduler.submit([job(tokens), job(["CN_single"], seq: 2)])
        let arrived = try await box.wait(for: tokens.count + 1)
        XCTAssertEqual(arrived.count, tokens.count + 1)
        await scheduler.finish()
        for token in tokens.filter({ !$0.hasPrefix("invalid") }) + ["CN_single"] { XCTAssertEqual(outcome(token), .delivered, token) }
        for token in tokens where token.hasPrefix("invalid") {
            guard case .feedback(let reason, _)? = outcome(token) else { return XCTFail("\(token): \(String(describing: outcome(token)))") }
            XCTAssertEqual(reason, "Unregistered")
        }
        XCTAssertEqual(oppo.stats.requests, 3, "1,000 + 500 in two batches, and one unicast")
        XCTAssertEqual(oppo.stats.lastRequest?.path.hasPrefix("/server/v1/message/notification/"), true)
        XCTAssertTrue(oppo.stats.duplicates.isEmpty)
        XCTAssertEqual(oppo.stats.delivered(classification: "IM"), oppo.stats.delivered, "the chat category on every one")
        XCTAssertEqual(oppo.stats.accessTokensIssued, 1)
    }

    func testBatchesAndAUnicastOverHTTP2() async throws { try await sendBatchesAndAUnicast(http2: true) }

    func testBatchesAndAUnicastOverHTTP1() async throws { try await sendBatchesAndAUnicast(http2: false) }

    /// A batch OPPO answers with a server error (-1) is sent again, with the current auth token in its form: each
    /// token delivered once.
    func testAFailedBatchIsSentAgainAndShownOnce() async throws {
        let scheduler = try lane()
        oppo.failNext(1, with: -1)
        let tokens = (0..<20).map { "CN_retry\($0)" }
        scheduler.submit([job(tokens)])
        let arrived = try await box.wait(for: tokens.count)
        XCTAssertEqual(arrived.count, tokens.count)
        await scheduler.finish()
        XCTAssertEqual(oppo.stats.count(code: "-1"), 1)
        XCTAssertEqual(oppo.stats.deliveredByToken, Dictionary(uniqueKeysWithValues: tokens.map { ($0, 1) }))
        XCTAssertTrue(box.all.allSatisfy { $0.outcome == .delivered })
    }
}
