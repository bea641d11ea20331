import Foundation
import Logging
import ProviderKit
@testable import Pusher
import PushCore
import PushEmulator
import QueueProtocol
import Receipts
import RedisClient
import TestSupport
@testable import XiaomiProvider
import XCTest

/// The whole way of a Xiaomi callback: a real `Scheduler` with `XiaomiService` sends a job whose form asks for receipts
/// at the app's secret path (`callback_url`), the emulator's Xiaomi side accepts every regId and then calls that URL
/// (type 16 for its "uninstalled" regId, type 1 for the other); the listener writes the dead regId to a real
/// redis-server's `push:feedback` once, with source receipt and the message's id from `extra.callback.param`.
final class XiaomiReceiptRoundTripTests: RedisTestCase {
    static let secret = "mi-round-trip-secret"
    static let channel = "im-private"
    private var server: EmulatorStandIn?
    private var listenerTask: Task<Void, Error>?

    override func setUp() async throws {
        _ = XiaomiModule.provider
        try await super.setUp()
    }

    override func tearDown() async throws {
        await server?.stop()
        listenerTask?.cancel()
        _ = await listenerTask?.result
        try await super.tearDown()
    }

    func testADeadRegIDTheEmulatorReportsReachesFeedbackOnce() async throws {
        // The worker's side: the listener, with the app's reader, on a loopback port.
        let probe = XiaomiFixtures.app(secret: Self.secret, channelID: Self.channel)
        let counts = ReceiptCounts()
        var app = probe
        let desk: ReceiptDesk
        let listener: ReceiptsServer
        do {
            // The listener's port is known once bound, and the app's callback_url names it: the reader (which checks
            // the secret path, not the host) is made with a stand-in URL.
            var placeholder = probe
            placeholder.callbackURL = "http://127.0.0.1:1"
            let reader = try XCTUnwrap(try XiaomiModule(settings: XiaomiSettings(apps: [placeholder])).receiptReader())
            desk = ReceiptDesk(readers: [reader], feedback: ReceiptFeedback(connection: RedisConnection(url: redis.url, name: "receipts"), keys: keys),
                               metrics: counts, logger: Logger(label: "test"))
            listener = try await ReceiptsServer.bind(ListenAddress(host: "127.0.0.1", port: 0), desk: desk, logger: Logger(label: "test"))
            app.callbackURL = "http://127.0.0.1:\(listener.port)"
        }
        listenerTask = Task { try await listener.run() }

        let server = try await EmulatorStandIn {
            $0.vendorPort = 0
            $0.xiaomi.apps = [.init(appSecret: Self.secret, packages: [XiaomiFixtures.topic], channels: [Self.channel])]
        }
        self.server = server
        let settings = XiaomiSettings(endpoint: "https://127.0.0.1:\(server.emulator.vendorPort)", caFile: server.caFile, apps: [app])
        let transport = XiaomiLanes.transportSettings(for: app, in: settings, rateLimit: XiaomiLanes.rateLimit(for: app))
        let service = try XiaomiService(app: app, settings: settings, metrics: .of(XiaomiModule.provider))
        let box = ResolutionBox()
        let scheduler = try Scheduler(settings: transport, service: service, sink: box.append)
        addTeardownBlock { scheduler.abort() }

        let payload = #"{"notification":{"title":"Alice","body":"hi"}}"#
        scheduler.submit([XiaomiFixtures.job(payload: payload, tokens: ["uninstalled-regid-1", "live-regid-2"], seq: 9)])
        _ = try await box.wait(for: 2)
        try await eventually { try await self.connection.length(self.keys.feedback) >= 1 }
        try await eventually { server.emulator.xiaomi.stats.receiptsAnswered >= 2 }
        await scheduler.finish()

        let entries = try await connection.strings(keys.feedback)
        XCTAssertEqual(entries.count, 1, "\(entries)")
        let entry = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(entries[0].utf8)) as? [String: Any])
        XCTAssertEqual(entry["token"] as? String, "uninstalled-regid-1")
        XCTAssertEqual(entry["source"] as? String, "receipt")
        XCTAssertEqual(entry["provider"] as? String, "xiaomi")
        XCTAssertEqual(entry["message_id"] as? String, "m9", "the callback.param the request carried")
        XCTAssertEqual(counts.received("xiaomi", XiaomiFixtures.topic, "delivered"), 1)
        XCTAssertEqual(counts.received("xiaomi", XiaomiFixtures.topic, "dead"), 1)
    }
}
