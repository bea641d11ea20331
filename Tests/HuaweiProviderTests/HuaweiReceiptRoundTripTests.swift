import Foundation
@testable import HuaweiProvider
import Logging
import ProviderKit
@testable import Pusher
import PushCore
import PushEmulator
import QueueProtocol
import Receipts
import RedisClient
import TestSupport
import XCTest

/// The whole way of a receipt: a real `Scheduler` with `HuaweiService` sends a job to the emulator's Huawei side,
/// which accepts every token and then calls the receipts listener with signed receipts (status 2 for its
/// "uninstalled" token); the listener writes that token to a real redis-server's `push:feedback`, with source receipt
/// and the message's id from the request's `bi_tag`.
final class HuaweiReceiptRoundTripTests: RedisTestCase {
    static let receiptSecret = "round-trip-receipt-secret"
    static let userName = "receipts-user"
    private var server: EmulatorStandIn?
    private var directory = ""
    private var listenerTask: Task<Void, Error>?
    private let box = ResolutionBox()
    private var caches: [AccessTokenCache] = []

    override func setUp() async throws {
        _ = HuaweiModule.provider
        try await super.setUp()
        directory = makeTemporaryDirectory("huawei-round-trip")
    }

    override func tearDown() async throws {
        for cache in caches { await cache.shutdown() }
        await server?.stop()
        listenerTask?.cancel()
        _ = await listenerTask?.result
        try? FileManager.default.removeItem(atPath: directory)
        try await super.tearDown()
    }

    func testADeadTokenTheEmulatorReportsReachesFeedback() async throws {
        let receiptFile = directory + "/receipt-secret.txt"
        let clientFile = directory + "/client-secret.txt"
        try Self.receiptSecret.write(toFile: receiptFile, atomically: true, encoding: .utf8)
        try Fixture.secret.write(toFile: clientFile, atomically: true, encoding: .utf8)
        let app = HuaweiApp(topic: Fixture.topic, appID: Fixture.appID, clientSecretFile: clientFile,
                            receiptSecretFile: receiptFile, receiptUserName: Self.userName)

        // The worker's side: the listener, with the app's reader, on a loopback port.
        let reader = try XCTUnwrap(try HuaweiModule(settings: HuaweiSettings(apps: [app])).receiptReader())
        let counts = ReceiptCounts()
        let desk = ReceiptDesk(readers: [reader], feedback: ReceiptFeedback(connection: RedisConnection(url: redis.url, name: "receipts"), keys: keys),
                               metrics: counts, logger: Logger(label: "test"))
        let listener = try await ReceiptsServer.bind(ListenAddress(host: "127.0.0.1", port: 0), desk: desk, logger: Logger(label: "test"))
        listenerTask = Task { try await listener.run() }

        // The vendor's side: the emulator, told where the app's receipts go.
        let target = EmulatorConfiguration.ReceiptTarget(url: "http://127.0.0.1:\(listener.port)/receipts/huawei",
                                                         secret: Self.receiptSecret, userName: Self.userName)
        let server = try await EmulatorStandIn {
            $0.vendorPort = 0
            $0.huawei.apps = [.init(appID: Fixture.appID, clientSecret: Fixture.secret, receipts: target)]
        }
        self.server = server
        let endpoint = server.emulator.vendorEndpoint
        let settings = HuaweiSettings(endpoint: endpoint, tokenURI: endpoint + "/oauth2/v3/token", caFile: server.caFile, apps: [app])
        let credential = try HuaweiCredential.make(for: app, settings: settings)
        if case .clientCredentials(let cache) = credential { caches.append(cache) }
        var transport = HuaweiLaneSettings.transportSettings(for: app, settings: settings, rateLimit: HuaweiLaneSettings.rateLimit(for: app))
        transport.requestTimeoutMillis = 120_000
        let service = HuaweiService(app: app, credential: credential, deliveries: AppDeliveryRecord(), metrics: .of(HuaweiModule.provider))
        let scheduler = try Scheduler(settings: transport, service: service, sink: box.append)
        if case .clientCredentials(let cache) = credential { cache.wakeOnChange([scheduler]) }
        addTeardownBlock { scheduler.abort() }

        let live = "IQAAAACy0kLive00001PushToken"
        scheduler.submit([Fixture.job(["uninstalled-device-1", live], seq: 7)])
        let outcomes = try await box.wait(for: 2)
        XCTAssertEqual(outcomes.count, 2, "both accepted when sent")
        try await eventually { try await self.connection.length(self.keys.feedback) >= 1 }
        try await eventually { server.emulator.huawei.stats.receiptsAnswered >= 1 }
        await scheduler.finish()

        let entries = try await connection.strings(keys.feedback)
        XCTAssertEqual(entries.count, 1, "\(entries)")
        let entry = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(entries[0].utf8)) as? [String: Any])
        XCTAssertEqual(entry["token"] as? String, "uninstalled-device-1")
        XCTAssertEqual(entry["source"] as? String, "receipt")
        XCTAssertEqual(entry["provider"] as? String, "huawei")
        XCTAssertEqual(entry["message_id"] as? String, "m7", "the bi_tag the request carried")
        XCTAssertEqual(counts.received("huawei", Fixture.topic, "delivered"), 1)
        XCTAssertEqual(counts.received("huawei", Fixture.topic, "dead"), 1)
    }
}
