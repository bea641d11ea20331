import AndroidPushKit
import Foundation
@testable import HuaweiProvider
import Logging
import ProviderKit
import PushCore
import Pusher
import QueueProtocol
import Receipts
import RedisClient
import TestSupport
import XCTest

/// Huawei's receipt callbacks: the signature, the clock check and the body read alone, then a real listener on a
/// loopback port writing to a real redis-server: a signed receipt's dead token reaches `push:feedback` once however
/// often it is sent; a bad signature, a stale time, another app's status and a 2 MiB body change nothing and are
/// counted.
final class HuaweiReceiptTests: RedisTestCase {
    static let secret = "receipt-secret-for-tests"
    static let userName = "receipts-user"
    var directories: [String] = []
    var server: ReceiptsServer?
    var counts = ReceiptCounts()
    var serverTask: Task<Void, Error>?

    override func setUp() async throws {
        _ = HuaweiModule.provider
        try await super.setUp()
    }

    override func tearDown() async throws {
        serverTask?.cancel()
        _ = await serverTask?.result
        for directory in directories { try? FileManager.default.removeItem(atPath: directory) }
        try await super.tearDown()
    }

    // MARK: - Signature, time and body, alone

    func signer(topic: String = Fixture.topic, appID: String = Fixture.appID, secret: String = HuaweiReceiptTests.secret) -> HuaweiReceiptSigner {
        HuaweiReceiptSigner(topic: topic, appID: appID, userName: Self.userName, secret: Secret(secret))
    }

    /// The header as Huawei makes it: Base64(HMAC-SHA256(secret, timestamp + nonce + userName)).
    static func header(at millis: Int64, nonce: String = "n0nce", secret: String = HuaweiReceiptTests.secret) -> String {
        let value = Data(HMACSHA256.mac(key: secret, message: "\(millis)\(nonce)\(userName)")).base64EncodedString()
        return "timestamp=\(millis);nonce=\(nonce);value=\(value)"
    }

    func testTheHMACIsRFC4231s() {
        // RFC 4231, test case 2.
        XCTAssertEqual(HMACSHA256.hex(HMACSHA256.mac(key: "Jefe", message: "what do ya want for nothing?")),
                       "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }

    func testASignatureIsCheckedAgainstTheAppsSecret() throws {
        let header = try HuaweiCallbackHeader.parse(Self.header(at: 1_700_000_000_000)).get()
        XCTAssertEqual(header.timestampMillis, 1_700_000_000_000)
        XCTAssertEqual(header.nonce, "n0nce")
        XCTAssertTrue(signer().signed(header))
        XCTAssertFalse(signer(secret: "another").signed(header))
        let moved = HuaweiCallbackHeader(timestamp: "1700000000002", timestampMillis: 1_700_000_000_002, nonce: header.nonce,
                                         value: header.value)
        XCTAssertFalse(signer().signed(moved), "the time is signed")
    }

    func testHeadersThatAreNotHuaweisAreRefusedWithTheirReason() {
        XCTAssertEqual(refusal(HuaweiCallbackHeader.parse(nil))?.reason, .badSignature)
        XCTAssertEqual(refusal(HuaweiCallbackHeader.parse(nil))?.status, 401)
        XCTAssertEqual(refusal(HuaweiCallbackHeader.parse("timestamp=1;nonce=x"))?.reason, .badSignature)
        XCTAssertEqual(refusal(HuaweiCallbackHeader.parse("timestamp=-5;nonce=x;value=y"))?.reason, .malformed)
        XCTAssertEqual(refusal(HuaweiCallbackHeader.parse("timestamp=99999999999999999999999;nonce=x;value=y"))?.reason, .malformed)
        XCTAssertEqual(refusal(HuaweiCallbackHeader.parse("timestamp=1;timestamp=2;nonce=x;value=y"))?.reason, .malformed)
        XCTAssertNil(refusal(HuaweiCallbackHeader.parse(" nonce=x ; value=y ; timestamp=1 ")))
    }

    func testTheSignedTimeMayBeFiveMinutesOffEitherWay() throws {
        let header = try HuaweiCallbackHeader.parse("timestamp=1000000;nonce=x;value=y").get()
        XCTAssertTrue(header.isFresh(nowMillis: 1_000_000 + 300_000, toleranceMillis: 300_000))
        XCTAssertTrue(header.isFresh(nowMillis: 1_000_000 - 300_000, toleranceMillis: 300_000))
        XCTAssertFalse(header.isFresh(nowMillis: 1_000_000 + 300_001, toleranceMillis: 300_000))
        XCTAssertFalse(header.isFresh(nowMillis: 1_000_000 - 300_001, toleranceMillis: 300_000))
        XCTAssertFalse(header.isFresh(nowMillis: .min, toleranceMillis: 300_000), "no arithmetic that traps")
    }

    func testTheBodysStatusesAreRead() throws {
        let body = try HuaweiReceiptBody.parse(Array(#"""
        {"statuses":[{"biTag":"m-1","appid":"104123456","token":"tok-a","status":2,"timestamp":1700000000000,"requestId":"r1"},
                     {"appid":"104123456","token":"tok-b","status":0,"requestId":"r2"},
                     {"token":"tok-c","status":"5"}]}
        """#.utf8)).get()
        XCTAssertEqual(body.statuses.count, 3)
        XCTAssertEqual(body.statuses[0], .init(appID: "104123456", token: "tok-a", code: 2, biTag: "m-1", requestID: "r1",
                                               timestampMillis: 1_700_000_000_000))
        XCTAssertEqual(body.statuses.map(\.status), [.dead, .delivered, .dead])
        XCTAssertEqual([6, 102, 201, 10, 15, 99].map { HuaweiReceiptBody.Status(token: "t", code: $0).status },
                       [.disabled, .overQuota, .filtered, .other, .other, .other])
    }

    func testBodiesOfAnotherShapeOrOverAHundredStatusesAreRefused() {
        XCTAssertEqual(refusal(HuaweiReceiptBody.parse(Array("not json".utf8)))?.reason, .malformed)
        XCTAssertEqual(refusal(HuaweiReceiptBody.parse(Array(#"{"status":[]}"#.utf8)))?.reason, .malformed)
        XCTAssertEqual(refusal(HuaweiReceiptBody.parse(Array(#"{"statuses":[{"status":0}]}"#.utf8)))?.reason, .malformed)
        let many = (0..<101).map { #"{"token":"t\#($0)","status":0}"# }.joined(separator: ",")
        XCTAssertEqual(refusal(HuaweiReceiptBody.parse(Array(#"{"statuses":[\#(many)]}"#.utf8)))?.reason, .tooLarge)
    }

    func testAStatusIsBelievedOnlyForAnAppThatSigned() throws {
        let other = signer(topic: "com.example.other", appID: "999", secret: "other-secret")
        let reader = HuaweiReceiptReader(signers: [other, signer()])
        let now: Int64 = 1_700_000_000_000
        let body = #"{"statuses":[{"appid":"104123456","token":"mine","status":2},{"appid":"999","token":"theirs","status":2},{"token":"unnamed","status":0}]}"#
        let reading = reader.read(ReceiptRequest(pathRemainder: "", headers: [("X-Huawei-Callback-Id", Self.header(at: now))],
                                                 body: Array(body.utf8), nowMillis: now + 1000))
        guard case .accepted(let receipts, let skipped) = reading else { return XCTFail("\(reading)") }
        XCTAssertEqual(receipts, [Receipt(app: Fixture.topic, token: "mine", status: .dead, messageID: ""),
                                  Receipt(app: Fixture.topic, token: "unnamed", status: .delivered, messageID: "")])
        XCTAssertEqual(skipped.map(\.reason), [.unknownApp], "app 999's secret did not sign it")
        let stale = reader.read(ReceiptRequest(pathRemainder: "", headers: [("X-HUAWEI-CALLBACK-ID", Self.header(at: now))],
                                               body: Array(body.utf8), nowMillis: now + 300_001))
        guard case .refused(let refusal) = stale else { return XCTFail("\(stale)") }
        XCTAssertEqual(refusal.reason, .stale)
    }

    func testRequestsCarryTheMessageIDAsTheirReceiptTag() {
        let payload = AndroidPayload(bytes: Array(#"{"notification":{"title":"A","body":"b"}}"#.utf8), vendorKey: "huawei")
        let v1 = HuaweiV1Request.document(payload, category: "IM", ttlSeconds: nil, collapseID: nil, messageID: "m-1",
                                          receiptTag: HuaweiReceiptTag.of(messageID: "m-1"))
        XCTAssertEqual(v1["message"]?["android"]?["bi_tag"]?.stringValue, "m-1")
        let v3 = HuaweiV3Request.document(payload, category: "IM", ttlSeconds: 60, collapseID: nil, messageID: "m-1",
                                          receiptTag: HuaweiReceiptTag.of(messageID: "m-1"))
        XCTAssertEqual(v3["pushOptions"]?["biTag"]?.stringValue, "m-1")
        XCTAssertEqual(v3["pushOptions"]?["ttl"], .number("60"))
        XCTAssertNil(HuaweiReceiptTag.of(messageID: String(repeating: "x", count: 65)), "over Huawei's 64 bytes: no tag")
        let untagged = HuaweiV1Request.document(payload, category: "IM", ttlSeconds: nil, collapseID: nil, messageID: "m-1")
        XCTAssertNil(untagged["message"]?["android"]?["bi_tag"])
    }

    func testTheConfigurationTakesBothReceiptKeysOrNeither() throws {
        var values = ["apps.0.topic": Fixture.topic, "apps.0.app_id": Fixture.appID, "apps.0.client_secret_file": "/x",
                      "apps.0.receipt_secret_file": "/y"]
        XCTAssertThrowsError(try HuaweiModule(block: ConfigurationBlock(name: "huawei", values: values))) { error in
            XCTAssertTrue("\(error)".contains("receipt_user_name"), "\(error)")
        }
        values["apps.0.receipt_user_name"] = Self.userName
        let module = try HuaweiModule(block: ConfigurationBlock(name: "huawei", values: values))
        XCTAssertTrue(module.settings.apps[0].takesReceipts)
        XCTAssertThrowsError(try module.receiptReader()) { error in XCTAssertTrue("\(error)".contains("/y"), "names the file: \(error)") }
    }

    func testReceiptKeysComeFromTheEnvironmentToo() throws {
        let configuration = try ConfigurationLoader(environment: [
            "HUAWEI_APPS_0_TOPIC": Fixture.topic, "HUAWEI_APPS_0_APP_ID": Fixture.appID, "HUAWEI_APPS_0_CLIENT_SECRET_FILE": "/x",
            "HUAWEI_APPS_0_RECEIPT_SECRET_FILE": "/run/secrets/receipt", "HUAWEI_APPS_0_RECEIPT_USER_NAME": Self.userName,
        ]).load(yaml: "")
        let module = try HuaweiModule(block: try XCTUnwrap(configuration.providerBlocks["huawei"]))
        XCTAssertEqual(module.settings.apps[0].receiptSecretFile, "/run/secrets/receipt")
        XCTAssertEqual(module.settings.apps[0].receiptUserName, Self.userName)
        XCTAssertTrue(module.summaryLines.contains { $0.contains("receipt_user_name \(Self.userName)") })
    }

    // MARK: - A real listener and a real Redis

    func startListener() async throws -> String {
        let directory = makeTemporaryDirectory("huawei-receipts")
        directories.append(directory)
        let file = directory + "/receipt-secret.txt"
        try "\(Self.secret)\n".write(toFile: file, atomically: true, encoding: .utf8)
        let module = HuaweiModule(settings: HuaweiSettings(apps: [
            HuaweiApp(topic: Fixture.topic, appID: Fixture.appID, clientSecretFile: "/unused", receiptSecretFile: file,
                      receiptUserName: Self.userName),
        ]))
        let reader = try XCTUnwrap(try module.receiptReader())
        let feedback = ReceiptFeedback(connection: RedisConnection(url: redis.url, name: "receipts"), keys: keys)
        let desk = ReceiptDesk(readers: [reader], feedback: feedback, metrics: counts, logger: Logger(label: "test"))
        let server = try await ReceiptsServer.bind(ListenAddress(host: "127.0.0.1", port: 0), desk: desk, logger: Logger(label: "test"))
        self.server = server
        serverTask = Task { try await server.run() }
        return "http://127.0.0.1:\(server.port)/receipts/huawei"
    }

    static func body(token: String, status: Int, tag: String = "m-1", appID: String = Fixture.appID) -> [UInt8] {
        Array(#"{"statuses":[{"biTag":"\#(tag)","appid":"\#(appID)","token":"\#(token)","status":\#(status),"timestamp":1700000000000,"requestId":"r-1"}]}"#.utf8)
    }

    func testASignedDeadTokenReachesFeedbackOnceHoweverOftenItIsSent() async throws {
        let url = try await startListener()
        for _ in 0..<2 {
            let answer = await httpPost(url, headers: ["X-HUAWEI-CALLBACK-ID": Self.header(at: WallClock.nowMillis())],
                                        body: Self.body(token: "gone-token", status: 2))
            XCTAssertEqual(answer?.status, 200)
            XCTAssertEqual(answer?.body.contains(#""code":"0""#), true)
        }
        let delivered = await httpPost(url, headers: ["X-HUAWEI-CALLBACK-ID": Self.header(at: WallClock.nowMillis())],
                                       body: Self.body(token: "live-token", status: 0))
        XCTAssertEqual(delivered?.status, 200)
        let entries = try await connection.strings(keys.feedback)
        XCTAssertEqual(entries.count, 1, "\(entries)")
        let entry = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(entries[0].utf8)) as? [String: Any])
        XCTAssertEqual(entry["token"] as? String, "gone-token")
        XCTAssertEqual(entry["topic"] as? String, Fixture.topic)
        XCTAssertEqual(entry["provider"] as? String, "huawei")
        XCTAssertEqual(entry["reason"] as? String, "Unregistered")
        XCTAssertEqual(entry["source"] as? String, "receipt")
        XCTAssertEqual(entry["message_id"] as? String, "m-1")
        XCTAssertEqual(counts.received("huawei", Fixture.topic, "dead"), 2, "each receipt counted")
        XCTAssertEqual(counts.received("huawei", Fixture.topic, "delivered"), 1)
        XCTAssertEqual(counts.feedback("huawei", Fixture.topic), 1, "written once")
    }

    func testForgedStaleForeignAndOversizedCallbacksChangeNothing() async throws {
        let url = try await startListener()
        let dead = Self.body(token: "gone-token", status: 2)
        let forged = await httpPost(url, headers: ["X-HUAWEI-CALLBACK-ID": Self.header(at: WallClock.nowMillis(), secret: "guess")], body: dead)
        XCTAssertEqual(forged?.status, 403)
        let unsigned = await httpPost(url, body: dead)
        XCTAssertEqual(unsigned?.status, 401)
        let stale = await httpPost(url, headers: ["X-HUAWEI-CALLBACK-ID": Self.header(at: WallClock.nowMillis() - 600_000)], body: dead)
        XCTAssertEqual(stale?.status, 403)
        let foreign = await httpPost(url, headers: ["X-HUAWEI-CALLBACK-ID": Self.header(at: WallClock.nowMillis())],
                                     body: Self.body(token: "gone-token", status: 2, appID: "another-app"))
        XCTAssertEqual(foreign?.status, 200, "signed: answered, but the other app's status is not believed")
        var huge = Self.body(token: "gone-token", status: 2)
        huge += [UInt8](repeating: UInt8(ascii: " "), count: 2 << 20)
        let oversized = await httpPost(url, headers: ["X-HUAWEI-CALLBACK-ID": Self.header(at: WallClock.nowMillis())], body: huge)
        XCTAssertEqual(oversized?.status, 413)
        let malformed = await httpPost(url, headers: ["X-HUAWEI-CALLBACK-ID": Self.header(at: WallClock.nowMillis())], body: Array("{".utf8))
        XCTAssertEqual(malformed?.status, 400)

        let feedbackLength = try await connection.length(keys.feedback)
        XCTAssertEqual(feedbackLength, 0)
        XCTAssertEqual(counts.refused("huawei", "bad_signature"), 2)
        XCTAssertEqual(counts.refused("huawei", "stale"), 1)
        XCTAssertEqual(counts.refused("huawei", "unknown_app"), 1)
        XCTAssertEqual(counts.refused("huawei", "too_large"), 1)
        XCTAssertEqual(counts.refused("huawei", "malformed"), 1)
        XCTAssertEqual(counts.received("huawei", Fixture.topic, "dead"), 0)
        // The listener still answers after all that.
        let good = await httpPost(url, headers: ["X-HUAWEI-CALLBACK-ID": Self.header(at: WallClock.nowMillis())], body: dead)
        XCTAssertEqual(good?.status, 200)
    }

    func testTheListenerStopsWhenItsTaskIsCancelled() async throws {
        let url = try await startListener()
        serverTask?.cancel()
        _ = await serverTask?.result
        serverTask = nil
        let answer = await httpPost(url, body: [], timeout: 2)
        XCTAssertNil(answer, "closed")
    }

    private func refusal<T>(_ result: Result<T, ReceiptRefusal>) -> ReceiptRefusal? {
        if case .failure(let refusal) = result { return refusal }
        return nil
    }
}
