import Foundation
@testable import PushEmulator
import TestSupport
import XCTest

/// The emulator's Xiaomi MiPush side over real HTTP/2 + TLS on its vendor listener: regId sends with MiPush's
/// checks, `data.bad_regids` per regId, the per-app rate (10027), the daily quota (10034) on a day the test moves,
/// and flow control.
final class XiaomiSideTests: XCTestCase {
    static let secret = "mi-app-secret-Zm9vYmFy"
    static let quotaSecret = "mi-quota-secret"
    static let package = "com.example.chat"
    static let path = "/v3/message/regid"

    private var server: EmulatorStandIn!

    override func setUp() async throws {
        server = try await EmulatorStandIn {
            $0.vendorPort = 0
            $0.xiaomi.apps = [
                .init(appSecret: Self.secret, packages: [Self.package, "com.example.other"], channels: ["im-private"]),
                .init(appSecret: Self.quotaSecret, packages: [Self.package], dailyQuota: 1500),
            ]
        }
    }

    override func tearDown() async throws {
        await server?.stop()
    }

    private var xiaomi: XiaomiSide { server.emulator.xiaomi }
    private var client: VendorTestClient { VendorTestClient(port: server.emulator.vendorPort, caFile: server.caFile) }

    /// The fields the worker sends for a chat notification; `change` edits them.
    static func fields(_ regIDs: [String], _ change: (inout [(String, String)]) -> Void = { _ in }) -> String {
        var fields: [(String, String)] = [
            ("registration_id", regIDs.joined(separator: ",")), ("restricted_package_name", package), ("pass_through", "0"),
            ("notify_type", "-1"), ("title", "Alice"), ("description", "hi"), ("payload", #"{"cid":"c1"}"#),
            ("time_to_live", "86400000"), ("notify_id", "123"), ("extra.channel_id", "im-private"), ("extra.notify_effect", "1"),
        ]
        change(&fields)
        return VendorTestClient.form(fields)
    }

    private func send(_ body: String, secret: String = XiaomiSideTests.secret, path: String = XiaomiSideTests.path) async
        -> (status: Int, body: [String: Any]) {
        await client.send(path, headers: [("content-type", "application/x-www-form-urlencoded;charset=UTF-8"),
                                          ("authorization", "key=\(secret)")], body: body)
    }

    func testAThousandRegIDsAreEachDeliveredOnce() async throws {
        let regIDs = (0..<1000).map { String(format: "xmRegId%04d/AbC+dEf=", $0) }
        let answer = await send(Self.fields(regIDs))
        XCTAssertEqual(answer.status, 200, "\(answer.body)")
        XCTAssertEqual(answer.body["result"] as? String, "ok")
        XCTAssertEqual(answer.body["code"] as? Int, 0)
        let data = answer.body["data"] as? [String: Any] ?? [:]
        XCTAssertNotNil(data["id"] as? String)
        XCTAssertNil(data["bad_regids"])
        XCTAssertEqual(xiaomi.stats.delivered, 1000)
        XCTAssertEqual(Set(xiaomi.stats.deliveredByToken.keys), Set(regIDs))
        XCTAssertTrue(xiaomi.stats.duplicates.isEmpty)
        XCTAssertEqual(xiaomi.stats.delivered(classification: "im-private"), 1000)
        // The v2 path (one package) is the same send.
        let v2 = await send(Self.fields(["v2-regid"]), path: "/v2/message/regid")
        XCTAssertEqual(v2.body["code"] as? Int, 0, "\(v2.body)")
    }

    func testBadRegIDsAreListedAndTheOthersDelivered() async throws {
        let answer = await send(Self.fields(["good-1", "unregistered-1", "good-2", "invalid-2"]))
        XCTAssertEqual(answer.body["code"] as? Int, 0, "\(answer.body)")
        let data = answer.body["data"] as? [String: Any] ?? [:]
        XCTAssertEqual(data["bad_regids"] as? String, "unregistered-1,invalid-2")
        XCTAssertEqual(xiaomi.stats.deliveredByToken, ["good-1": 1, "good-2": 1])
        let all = await send(Self.fields(["unregistered-9"]))
        XCTAssertEqual(all.body["code"] as? Int, 0)
        XCTAssertEqual((all.body["data"] as? [String: Any])?["bad_regids"] as? String, "unregistered-9")
        XCTAssertEqual(xiaomi.stats.refusedTokens, 3)
    }

    func testRequestsMiPushRefuses() async throws {
        let cases: [(body: String, secret: String, code: Int)] = [
            (Self.fields((0...1000).map { "r\($0)" }), Self.secret, 10017),
            (Self.fields(["r1"]), "wrong-secret", 21301),
            (Self.fields(["r1"]) { $0.removeAll { $0.0 == "registration_id" } }, Self.secret, 10016),
            (Self.fields(["r1", ""]), Self.secret, 10017),
            (Self.fields(["r1"]) { $0[1].1 = "com.example.unknown" }, Self.secret, 22022),
            (Self.fields(["r1"]) { $0[4].1 = String(repeating: "标", count: 50) }, Self.secret, 10017),
            (Self.fields(["r1"]) { $0[5].1 = String(repeating: "d", count: 128) }, Self.secret, 10017),
            (Self.fields(["r1"]) { $0.removeAll { $0.0 == "description" } }, Self.secret, 10016),
            (Self.fields(["r1"]) { $0[4].1 = "   " }, Self.secret, 10017),
            (Self.fields(["r1"]) { $0[3].1 = "8" }, Self.secret, 10017),
            (Self.fields(["r1"]) { $0[9].1 = "public-channel" }, Self.secret, 27001),
            (Self.fields(["r1"]) { $0 += (0..<11).map { ("extra.k\($0)", "v") } }, Self.secret, 65014),
            (Self.fields(["r1"]) { $0.append(("extra.template_id", "t1")) }, Self.secret, 10016),
            (Self.fields(["r1"]) { $0 += [("extra.template_id", "t1"), ("extra.template_param", #"{"name":"😀"}"#)] }, Self.secret, 10017),
        ]
        for (body, secret, code) in cases {
            let answer = await send(body, secret: secret)
            XCTAssertEqual(answer.status, 200)
            XCTAssertEqual(answer.body["result"] as? String, "error", "\(body.prefix(100))")
            XCTAssertEqual(answer.body["code"] as? Int, code, "\(body.prefix(100)): \(answer.body)")
            XCTAssertNotNil(answer.body["reason"] as? String)
        }
        // 49 CJK characters are a legal title; a template with good parameters passes.
        let legal = await send(Self.fields(["r2"]) {
            $0[4].1 = String(repeating: "标", count: 49)
            $0 += [("extra.template_id", "t1"), ("extra.template_param", #"{"name":"Alice","text":"hi"}"#)]
        })
        XCTAssertEqual(legal.body["code"] as? Int, 0, "\(legal.body)")
        XCTAssertEqual(xiaomi.stats.deliveredByToken, ["r2": 1])
    }

    func testTheDailyQuotaRefusesWith10034UntilTheNextXiaomiDay() async throws {
        xiaomi.clock.freeze()
        let batch = (0..<1000).map { "q\($0)" }
        let first = await send(Self.fields(batch), secret: Self.quotaSecret)
        XCTAssertEqual(first.body["code"] as? Int, 0, "\(first.body)")
        let spent = await send(Self.fields(batch.map { $0 + "b" }), secret: Self.quotaSecret)
        XCTAssertEqual(spent.body["result"] as? String, "error")
        XCTAssertEqual(spent.body["code"] as? Int, 10034, "\(spent.body)")
        XCTAssertEqual(xiaomi.messagesToday(appSecret: Self.quotaSecret), 1000)
        // Other apps are not held by it.
        let other = await send(Self.fields(["x1"]))
        XCTAssertEqual(other.body["code"] as? Int, 0)

        let day = xiaomi.day
        xiaomi.startNextDay()
        XCTAssertEqual(xiaomi.day, day + 1)
        let nextDay = await send(Self.fields(batch.map { $0 + "b" }), secret: Self.quotaSecret)
        XCTAssertEqual(nextDay.body["code"] as? Int, 0, "\(nextDay.body)")
        XCTAssertEqual(xiaomi.stats.count(code: "10034"), 1)
        XCTAssertEqual(xiaomi.stats.delivered, 2001)
        XCTAssertTrue(xiaomi.stats.duplicates.isEmpty)
    }

    func testTheDayRollsOverAtBeijingMidnight() throws {
        let quota = try XiaomiQuota(reset: "00:00+08:00", apps: [])
        XCTAssertEqual(quota.resetSecondsUTC, 16 * 3600)
        // 2026-01-01 15:59:59 UTC is 23:59:59 in Beijing; one second later a new day begins.
        let beforeMidnight: Double = 1_767_283_199
        XCTAssertEqual(quota.day(at: beforeMidnight) + 1, quota.day(at: beforeMidnight + 1))
        XCTAssertEqual(quota.nextReset(after: beforeMidnight), beforeMidnight + 1)
        XCTAssertEqual(XiaomiQuota.parse("08:30-05:00"), 13 * 3600 + 1800)
        XCTAssertNil(XiaomiQuota.parse("midnight"))
    }

    func testTheRateLimitAnswers10027AndFlowControl503() async throws {
        xiaomi.clock.freeze()
        xiaomi.updateFaults { $0.requestsPerSecond = 2 }
        var codes: [Int] = []
        for index in 0..<3 { codes.append(await send(Self.fields(["rate-\(index)"])).body["code"] as? Int ?? -99) }
        XCTAssertEqual(codes, [0, 0, 10027])
        xiaomi.clock.advance(by: 1)
        let nextSecond = await send(Self.fields(["rate-3"]))
        XCTAssertEqual(nextSecond.body["code"] as? Int, 0)

        xiaomi.updateFaults { $0.requestsPerSecond = nil; $0.flowControl = true }
        let held = await send(Self.fields(["held"]))
        XCTAssertEqual(held.status, 503)
        xiaomi.updateFaults { $0.flowControl = false }
        xiaomi.failNext(1, with: 20301)
        let failed = await send(Self.fields(["failed"]))
        XCTAssertEqual(failed.body["code"] as? Int, 20301)
        XCTAssertEqual(xiaomi.stats.deliveredByToken, ["rate-0": 1, "rate-1": 1, "rate-3": 1])
        XCTAssertEqual(xiaomi.stats.count(code: "10027"), 1)
    }
}
