import AndroidPushKit
import Foundation
import Logging
import ProviderKit
import PushCore
import Pusher
import QueueProtocol
import Receipts
import RedisClient
import TestSupport
@testable import XiaomiProvider
import XCTest

/// Xiaomi's receipt callbacks: the secret path and the body read alone, the `extra.callback*` fields of a message,
/// then a real listener writing to a real redis-server: a dead target reaches `push:feedback` once however often the
/// callback comes; a wrong path, an app without receipts and a 2 MiB body change nothing and are counted.
final class XiaomiReceiptTests: RedisTestCase {
    static let secret = "mi-secret"
    var files: [String] = []
    var counts = ReceiptCounts()
    var serverTask: Task<Void, Error>?

    override func setUp() async throws {
        _ = XiaomiModule.provider
        try await super.setUp()
    }

    override func tearDown() async throws {
        serverTask?.cancel()
        _ = await serverTask?.result
        for file in files { try? FileManager.default.removeItem(atPath: (file as NSString).deletingLastPathComponent) }
        try await super.tearDown()
    }

    var segment: String { XiaomiCallbackPath.segment(secret: Secret(Self.secret), package: XiaomiFixtures.topic) }

    func app(callbackURL: String = "https://push.example.com") -> XiaomiApp {
        var app = XiaomiFixtures.app(secret: Self.secret)
        files.append(app.appSecretFile)
        app.callbackURL = callbackURL
        return app
    }

    func testTheSecretPathIsTheAppsOwn() {
        XCTAssertEqual(segment.count, 32)
        XCTAssertEqual(segment, String(HMACSHA256.hex(HMACSHA256.mac(key: Self.secret, message: "receipts:" + XiaomiFixtures.topic)).prefix(32)))
        XCTAssertNotEqual(segment, XiaomiCallbackPath.segment(secret: Secret("another"), package: XiaomiFixtures.topic))
        XCTAssertNotEqual(segment, XiaomiCallbackPath.segment(secret: Secret(Self.secret), package: "com.example.other"))
    }

    func testMessagesAskForReceiptsOnlyForAnAppWithACallbackURL() throws {
        let payload = #"{"notification":{"title":"Alice","body":"hi"}}"#
        let tokens = RequestTokens(0, rest: [1])
        let withURL = try XiaomiFixtures.service(app())
        let fields = XiaomiFixtures.fieldMap(XiaomiFixtures.body(withURL, JobContext(job: XiaomiFixtures.job(payload: payload)), tokens))
        XCTAssertEqual(fields["extra.callback"], "https://push.example.com/receipts/xiaomi/\(segment)")
        XCTAssertEqual(fields["extra.callback.param"], "m1")
        XCTAssertEqual(fields["extra.callback.type"], "241", "1 + 16 + 32 + 64 + 128")
        let without = try XiaomiFixtures.service(app(callbackURL: ""))
        let plain = XiaomiFixtures.fieldMap(XiaomiFixtures.body(without, JobContext(job: XiaomiFixtures.job(payload: payload)), tokens))
        XCTAssertNil(plain["extra.callback"])
        XCTAssertNil(plain["extra.callback.param"])
    }

    func testCallbackURLsAreChecked() {
        XCTAssertNil(XiaomiCallbackPath.problem(baseURL: "https://push.example.com"))
        XCTAssertNil(XiaomiCallbackPath.problem(baseURL: "http://10.0.0.1:9465/push"))
        XCTAssertNotNil(XiaomiCallbackPath.problem(baseURL: "ftp://push.example.com"))
        XCTAssertNotNil(XiaomiCallbackPath.problem(baseURL: "https://push.example.com/?a=1"))
        XCTAssertNotNil(XiaomiCallbackPath.problem(baseURL: "push.example.com"))
        XCTAssertThrowsError(try XiaomiModule(block: ConfigurationBlock(name: "xiaomi", values: [
            "apps.0.topic": "t", "apps.0.app_secret_file": "/x", "apps.0.callback_url": "not a url",
        ]))) { error in XCTAssertTrue("\(error)".contains("callback_url"), "\(error)") }
    }

    func testTheBodyIsReadAsXiaomiSendsIt() throws {
        let json = #"{"msg1":{"param":"m-1","type":16,"targets":"r1,r2","jobkey":"k","barStatus":"Enable","timestamp":1700000000000},"msg2":{"type":"1","targets":["r3"]}}"#
        var form: [UInt8] = []
        FormEncoding.appendField("data", json, to: &form)
        let body = try XiaomiReceiptBody.parse(form).get()
        XCTAssertEqual(body.reports, [
            .init(messageID: "msg1", param: "m-1", type: 16, targets: ["r1", "r2"], timestampMillis: 1_700_000_000_000),
            .init(messageID: "msg2", param: nil, type: 1, targets: ["r3"], timestampMillis: nil),
        ])
        XCTAssertEqual(try XiaomiReceiptBody.parse(Array("data=\(json.replacingOccurrences(of: " ", with: "+"))".utf8)).get().reports.count, 2,
                       "a raw JSON value in the form is read too")
        XCTAssertEqual([1, 2, 16, 32, 64, 128, 17, 4].map { XiaomiReceiptBody.Report(messageID: "", type: $0, targets: []).status },
                       [.delivered, .clicked, .dead, .disabled, .filtered, .overQuota, .dead, .other])
        if case .success = XiaomiReceiptBody.parse(Array("nothing=1".utf8)) { XCTFail("no data field") }
        if case .success = XiaomiReceiptBody.parse(Array("data=%5B%5D".utf8)) { XCTFail("not an object") }
    }

    // MARK: - A real listener and a real Redis

    func startListener() async throws -> String {
        let module = XiaomiModule(settings: XiaomiSettings(apps: [app()]))
        let reader = try XCTUnwrap(try module.receiptReader())
        let feedback = ReceiptFeedback(connection: RedisConnection(url: redis.url, name: "receipts"), keys: keys)
        let desk = ReceiptDesk(readers: [reader], feedback: feedback, metrics: counts, logger: Logger(label: "test"))
        let server = try await ReceiptsServer.bind(ListenAddress(host: "127.0.0.1", port: 0), desk: desk, logger: Logger(label: "test"))
        serverTask = Task { try await server.run() }
        return "http://127.0.0.1:\(server.port)/receipts/xiaomi"
    }

    static func form(_ json: String) -> [UInt8] {
        var form: [UInt8] = []
        FormEncoding.appendField("data", json, to: &form)
        return form
    }

    func testADeadTargetReachesFeedbackOnceHoweverOftenTheCallbackComes() async throws {
        let url = try await startListener()
        let callback = Self.form(#"{"x1":{"param":"m-1","type":16,"targets":"gone-1,gone-2"},"x2":{"param":"m-1","type":1,"targets":"live-1"}}"#)
        for _ in 0..<2 {
            let answer = await httpPost("\(url)/\(segment)", headers: ["Content-Type": "application/x-www-form-urlencoded"], body: callback)
            XCTAssertEqual(answer?.status, 200)
        }
        let entries = try await connection.strings(keys.feedback)
        XCTAssertEqual(entries.count, 2, "\(entries)")
        let tokens = try entries.map { try XCTUnwrap(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
        XCTAssertEqual(Set(tokens.compactMap { $0["token"] as? String }), ["gone-1", "gone-2"])
        for entry in tokens {
            XCTAssertEqual(entry["provider"] as? String, "xiaomi")
            XCTAssertEqual(entry["source"] as? String, "receipt")
            XCTAssertEqual(entry["topic"] as? String, XiaomiFixtures.topic)
            XCTAssertEqual(entry["message_id"] as? String, "m-1")
        }
        XCTAssertEqual(counts.received("xiaomi", XiaomiFixtures.topic, "dead"), 4)
        XCTAssertEqual(counts.received("xiaomi", XiaomiFixtures.topic, "delivered"), 2)
        XCTAssertEqual(counts.feedback("xiaomi", XiaomiFixtures.topic), 2)
    }

    func testWrongPathsOtherProvidersAndOversizedBodiesChangeNothing() async throws {
        let url = try await startListener()
        let callback = Self.form(#"{"x1":{"param":"m-1","type":16,"targets":"gone-1"}}"#)
        let guessed = await httpPost("\(url)/\(String(repeating: "0", count: 32))", body: callback)
        XCTAssertEqual(guessed?.status, 403)
        let bare = await httpPost(url, body: callback)
        XCTAssertEqual(bare?.status, 401)
        let huge = await httpPost("\(url)/\(segment)", body: callback + [UInt8](repeating: UInt8(ascii: "a"), count: 2 << 20))
        XCTAssertEqual(huge?.status, 413)
        let unknown = await httpPost(url.replacingOccurrences(of: "/xiaomi", with: "/nobody"), body: callback)
        XCTAssertEqual(unknown?.status, 404)
        let feedbackLength = try await connection.length(keys.feedback)
        XCTAssertEqual(feedbackLength, 0)
        XCTAssertEqual(counts.refused("xiaomi", "bad_signature"), 2)
        XCTAssertEqual(counts.refused("xiaomi", "too_large"), 1)
    }
}
