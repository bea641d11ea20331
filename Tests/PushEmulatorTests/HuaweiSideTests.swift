@testable import FCMProvider
import Foundation
@testable import PushEmulator
import TestSupport
import XCTest

/// The emulator's Huawei Push Kit side over real HTTP/2 + TLS on its vendor listener: the OAuth token endpoint,
/// v1 sends with Huawei's checks and codes (partial failures per token, 80300007, 80300010, 401 for a bad or
/// expired token), flow control, and v3 sends with PS256 JWTs signed by the openssl command.
final class HuaweiSideTests: XCTestCase {
    static let appID = "104123456"
    static let secret = "c2VjcmV0LWZvci10ZXN0cw+/="
    static let path = "/v1/\(appID)/messages:send"

    private var account: HuaweiAccountFixture!
    private var server: EmulatorStandIn!

    override func setUp() async throws {
        account = try HuaweiAccountFixture()
        let jsonFile = account.jsonFile
        server = try await EmulatorStandIn {
            $0.vendorPort = 0
            $0.huawei.apps = [.init(appID: Self.appID, clientSecret: Self.secret), .init(appID: "104999999", clientSecret: "other")]
            $0.huawei.serviceAccounts = [try! .init(keyJSONFile: jsonFile)]
        }
    }

    override func tearDown() async throws {
        await server?.stop()
    }

    private var huawei: HuaweiSide { server.emulator.huawei }
    private var client: VendorTestClient { VendorTestClient(port: server.emulator.vendorPort, caFile: server.caFile) }

    private func v1(_ body: String, bearer: String? = nil) async -> (status: Int, body: [String: Any]) {
        await client.send(Self.path, headers: [("content-type", "application/json;charset=UTF-8"),
                                               ("authorization", "Bearer \(bearer ?? huawei.issueAccessToken(appID: Self.appID))")],
                          body: body)
    }

    /// A v1 notification for `tokens` as the worker maps one (IM category, click action "open the app").
    static func message(_ tokens: [String], android: String = #""category":"IM","ttl":"86400s","collapse_key":-1,"notification":{"title":"Alice","body":"hi","importance":"NORMAL","notify_id":123,"click_action":{"type":3}}"#) -> String {
        let list = tokens.map { "\"\($0)\"" }.joined(separator: ",")
        return #"{"validate_only":false,"message":{"data":"{\"cid\":\"c1\"}","token":[\#(list)],"android":{\#(android)}}}"#
    }

    private func msg(_ answer: (status: Int, body: [String: Any])) -> [String: Any] {
        jsonObject((answer.body["msg"] as? String) ?? "")
    }

    // MARK: The token endpoint

    func testTheTokenEndpointIssuesForClientCredentialsAndRefusesInHuaweisWords() async throws {
        let form = [("content-type", "application/x-www-form-urlencoded")]
        func exchange(_ fields: [(String, String)]) async -> (status: Int, body: [String: Any]) {
            await client.send("/oauth2/v3/token", headers: form, body: VendorTestClient.form(fields))
        }
        let good = await exchange([("grant_type", "client_credentials"), ("client_id", Self.appID), ("client_secret", Self.secret)])
        XCTAssertEqual(good.status, 200, "\(good.body)")
        XCTAssertEqual(good.body["token_type"] as? String, "Bearer")
        XCTAssertEqual(good.body["expires_in"] as? Int, 3600)
        let token = try XCTUnwrap(good.body["access_token"] as? String)
        let sent = await v1(Self.message(["tok-1"]), bearer: token)
        XCTAssertEqual(sent.body["code"] as? String, "80000000", "\(sent.body)")

        let cases: [(fields: [(String, String)], error: Int, subError: Int)] = [
            ([("grant_type", "client_credentials"), ("client_id", Self.appID), ("client_secret", "wrong")], 1101, 12304),
            ([("grant_type", "client_credentials"), ("client_id", "104000000"), ("client_secret", Self.secret)], 1203, 12303),
            ([("grant_type", "client_credentials"), ("client_id", "abc"), ("client_secret", Self.secret)], 1101, 20002),
            ([("grant_type", "client_credentials"), ("client_secret", Self.secret)], 1102, 20001),
            ([("grant_type", "password"), ("client_id", Self.appID), ("client_secret", Self.secret)], 1101, 20182),
            ([("client_id", Self.appID), ("client_secret", Self.secret)], 1102, 20181),
            ([("grant_type", "client_credentials"), ("client_id", Self.appID)], 1101, 20171),
        ]
        for (fields, error, subError) in cases {
            let refused = await exchange(fields)
            XCTAssertEqual(refused.status, 400, "\(fields)")
            XCTAssertEqual(refused.body["error"] as? Int, error, "\(fields): \(refused.body)")
            XCTAssertEqual(refused.body["sub_error"] as? Int, subError, "\(fields): \(refused.body)")
            XCTAssertNotNil(refused.body["error_description"] as? String)
        }
        XCTAssertEqual(huawei.stats.tokenEndpointRequests, 1 + cases.count)
        XCTAssertEqual(huawei.stats.accessTokensIssued, 1)
    }

    // MARK: v1 sends

    func testAThousandTokensAreEachDeliveredOnce() async throws {
        let tokens = (0..<1000).map { String(format: "IQAAAACy0k%04dPushToken", $0) }
        let answer = await v1(Self.message(tokens))
        XCTAssertEqual(answer.status, 200, "\(answer.body)")
        XCTAssertEqual(answer.body["code"] as? String, "80000000")
        XCTAssertEqual(answer.body["msg"] as? String, "Success")
        XCTAssertNotNil(answer.body["requestId"] as? String)
        XCTAssertEqual(huawei.stats.delivered, 1000)
        XCTAssertEqual(Set(huawei.stats.deliveredByToken.keys), Set(tokens))
        XCTAssertTrue(huawei.stats.duplicates.isEmpty)
        XCTAssertEqual(huawei.stats.delivered(classification: "IM"), 1000)
        let stats = jsonObject(server.emulator.huawei.stats.json)
        XCTAssertEqual(stats["distinct_tokens"] as? Int, 1000)
    }

    func testSomeRefusedTokensAreListedPerTokenAndTheOthersDelivered() async throws {
        let answer = await v1(Self.message(["good-1", "unregistered-1", "good-2", "invalid-2", "bad token", "good-1"]))
        XCTAssertEqual(answer.status, 200, "\(answer.body)")
        XCTAssertEqual(answer.body["code"] as? String, "80100000")
        let detail = msg(answer)
        XCTAssertEqual(detail["success"] as? Int, 3)
        XCTAssertEqual(detail["failure"] as? Int, 3)
        XCTAssertEqual(detail["illegal_tokens"] as? [String], ["unregistered-1", "invalid-2", "bad token"])
        XCTAssertEqual(huawei.stats.deliveredCount(token: "good-2"), 1)
        XCTAssertEqual(huawei.stats.deliveredCount(token: "unregistered-1"), 0)
        // Huawei delivers a token listed twice twice: the stats show the duplicate.
        XCTAssertEqual(huawei.stats.duplicates, ["good-1": 2])
        XCTAssertEqual(huawei.stats.refusedTokens, 3)
    }

    func testEveryTokenRefusedIs80300007AndNothingDelivered() async throws {
        let answer = await v1(Self.message(["unregistered-1", "invalid-1"]))
        XCTAssertEqual(answer.status, 400, "\(answer.body)")
        XCTAssertEqual(answer.body["code"] as? String, "80300007")
        XCTAssertEqual(msg(answer)["illegal_tokens"] as? [String], ["unregistered-1", "invalid-1"])
        XCTAssertEqual(huawei.stats.delivered, 0)
    }

    func testTokenCountsOutsideOneToAThousandAre80300010() async throws {
        let over = await v1(Self.message((0...1000).map { "tok-\($0)" }))
        XCTAssertEqual(over.status, 400)
        XCTAssertEqual(over.body["code"] as? String, "80300010", "\(over.body)")
        let none = await v1(Self.message([]))
        XCTAssertEqual(none.body["code"] as? String, "80300010", "\(none.body)")
        XCTAssertEqual(huawei.stats.delivered, 0)
    }

    func testABadOrExpiredAccessTokenIs401() async throws {
        let unknown = await v1(Self.message(["tok-1"]), bearer: "not-issued")
        XCTAssertEqual(unknown.status, 401)
        XCTAssertEqual(unknown.body["code"] as? String, "80200001")
        let otherApp = await v1(Self.message(["tok-1"]), bearer: huawei.issueAccessToken(appID: "104999999"))
        XCTAssertEqual(otherApp.status, 401)
        XCTAssertEqual(otherApp.body["code"] as? String, "80200001")

        // An hour later on the side's clock, without waiting.
        let token = huawei.issueAccessToken(appID: Self.appID)
        huawei.clock.advance(by: 3601)
        let expired = await v1(Self.message(["tok-1"]), bearer: token)
        XCTAssertEqual(expired.status, 401)
        XCTAssertEqual(expired.body["code"] as? String, "80200003")
        let fresh = huawei.issueAccessToken(appID: Self.appID)
        huawei.expireAccessTokens()
        let revoked = await v1(Self.message(["tok-1"]), bearer: fresh)
        XCTAssertEqual(revoked.body["code"] as? String, "80200003")
        XCTAssertEqual(huawei.stats.count(status: 401), 4)
        XCTAssertEqual(huawei.stats.delivered, 0)
    }

    func testBodiesHuaweiRefusesGetItsCodes() async throws {
        let noClick = #""category":"IM","notification":{"title":"a","body":"b"}"#
        let cases: [(body: String, code: String)] = [
            ("not json", "80100003"),
            (#"{"message":{"token":"t1","android":{}}}"#, "80100003"),
            (#"{"message":{"token":["t1"],"topic":"news","data":"x"}}"#, "80100003"),
            (#"{"message":{"token":["t1"],"notification":{"title":"a","body":"b"}}}"#, "80100003"),
            (Self.message(["t1"], android: noClick), "80100003"),
            (Self.message(["t1"], android: #""category":"CHAT","data":"x""#), "80100001"),
            (Self.message(["t1"], android: #""ttl":"1296001s","data":"x""#), "80100001"),
            (Self.message(["t1"], android: #""collapse_key":101,"data":"x""#), "80100013"),
            (Self.message(["t1"], android: #""urgency":"HIGH","data":"x""#), "80300011"),
            (Self.message(["t1"], android: #""data":"\#(String(repeating: "x", count: 4100))""#), "80300008"),
        ]
        let answers = await client.sendAll(cases.map {
            (Self.path, [("authorization", "Bearer \(huawei.issueAccessToken(appID: Self.appID))")], $0.body)
        })
        for (answer, expected) in zip(answers, cases) {
            XCTAssertEqual(answer.body["code"] as? String, expected.code, "\(expected.body.prefix(120)): \(answer.body)")
            XCTAssertEqual(answer.status, 400, "\(expected.body.prefix(120))")
        }
        XCTAssertEqual(huawei.stats.delivered, 0)
        // Data messages and validate_only pass: nothing delivered for the latter.
        let data = await v1(Self.message(["t1"], android: #""data":"{}","ttl":"60""#))
        XCTAssertEqual(data.body["code"] as? String, "80000000", "\(data.body)")
        let check = await v1(#"{"validate_only":true,"message":{"token":["t2"],"data":"x"}}"#)
        XCTAssertEqual(check.body["code"] as? String, "80000000")
        XCTAssertEqual(huawei.stats.deliveredByToken, ["t1": 1])
        XCTAssertEqual(huawei.stats.validatedOnly, 1)
    }

    func testFlowControlAndThePerAppRateAnswer503() async throws {
        huawei.updateFaults { $0.flowControl = true }
        let held = await v1(Self.message(["tok-1"]))
        XCTAssertEqual(held.status, 503)
        huawei.updateFaults { $0.flowControl = false; $0.requestsPerSecond = 2 }
        huawei.clock.freeze()
        var codes: [String] = []
        for index in 0..<3 { codes.append(await v1(Self.message(["tok-\(index)"])).body["code"] as? String ?? "") }
        XCTAssertEqual(codes, ["80000000", "80000000", "503"])
        huawei.clock.advance(by: 1)
        let next = await v1(Self.message(["tok-3"]))
        XCTAssertEqual(next.body["code"] as? String, "80000000")
        huawei.updateFaults { $0.requestsPerSecond = nil; $0.tokensPerSecond = 3 }
        huawei.clock.advance(by: 1)
        let tooMany = await v1(Self.message(["a", "b", "c", "d"]))
        XCTAssertEqual(tooMany.status, 503)
        XCTAssertTrue(huawei.failNext(1, with: "81000001"))
        huawei.updateFaults { $0.tokensPerSecond = nil }
        let internalError = await v1(Self.message(["e"]))
        XCTAssertEqual(internalError.status, 500)
        XCTAssertEqual(internalError.body["code"] as? String, "81000001")
        XCTAssertEqual(huawei.stats.deliveredByToken, ["tok-0": 1, "tok-1": 1, "tok-3": 1])
        XCTAssertEqual(huawei.stats.count(code: "503"), 3)
    }

    // MARK: v3 sends

    private var v3Path: String { "/v3/\(account.projectID)/messages:send" }

    private func v3(_ body: String, jwt: String? = nil, pushType: String? = "0") async throws -> (status: Int, body: [String: Any]) {
        var headers = [(name: "content-type", value: "application/json"), (name: "authorization", value: "Bearer \(try jwt ?? account.jwt())")]
        if let pushType { headers.append((name: "push-type", value: pushType)) }
        return await client.send(v3Path, headers: headers, body: body)
    }

    static func v3Message(_ tokens: [String], category: String? = "IM") -> String {
        let list = tokens.map { "\"\($0)\"" }.joined(separator: ",")
        let categoryField = category.map { #""category":"\#($0)","# } ?? ""
        return #"{"payload":{"notification":{\#(categoryField)"title":"Alice","body":"hi","notifyId":123,"clickAction":{"actionType":0,"data":{"cid":"c1"}}}},"target":{"token":[\#(list)]},"pushOptions":{"ttl":86400,"collapseKey":-1,"biTag":"m-123"}}"#
    }

    func testV3TakesAPS256JWTAndGroupsRefusedTokensByReason() async throws {
        let tokens = (0..<1000).map { "MAMzLg\($0)" }
        let good = try await v3(Self.v3Message(tokens))
        XCTAssertEqual(good.status, 200, "\(good.body)")
        XCTAssertEqual(good.body["code"] as? String, "80000000")
        XCTAssertEqual(huawei.stats.delivered, 1000)
        XCTAssertTrue(huawei.stats.duplicates.isEmpty)

        let partial = try await v3(Self.v3Message(["ok-1", "unregistered-1", "invalid-1", "platform-1"]))
        XCTAssertEqual(partial.body["code"] as? String, "80100000", "\(partial.body)")
        let detail = msg(partial)
        XCTAssertEqual(detail["failure"] as? Int, 3)
        let groups = detail["illegalTokens"] as? [String: [String]] ?? [:]
        XCTAssertEqual(groups, ["noRight": ["unregistered-1"], "tokenFormatError": ["invalid-1"], "tokenPlatformNotSupport": ["platform-1"]])
        let all = try await v3(Self.v3Message(["unregistered-2"]))
        XCTAssertEqual(all.body["code"] as? String, "80300007")
        XCTAssertEqual(msg(all)["illegalTokens"] as? [String: [String]], ["noRight": ["unregistered-2"]])
        let over = try await v3(Self.v3Message((0...1000).map { "t\($0)" }))
        XCTAssertEqual(over.body["code"] as? String, "80300010")
        XCTAssertEqual(huawei.stats.deliveredCount(token: "ok-1"), 1)
        XCTAssertEqual(huawei.stats.delivered, 1001)
    }

    func testV3RefusesABadSignatureAndOtherJWTFaults() async throws {
        let stranger = try HuaweiAccountFixture(projectID: account.projectID, keyID: account.keyID, subAccount: account.subAccount)
        let now = Date().timeIntervalSince1970
        let cases: [(jwt: String, status: Int, code: String)] = [
            (try account.jwt(signingKey: stranger.keyFile), 401, "80200001"),
            (try account.jwt(saltLength: 20), 401, "80200001"),
            (try account.jwt(alg: "RS256"), 401, "80200001"),
            (try account.jwt(kid: "unknown"), 401, "80200001"),
            (try account.jwt(iss: "someone-else"), 401, "80200001"),
            (try account.jwt(aud: "https://example.com/token"), 401, "80200001"),
            (try account.jwt(iat: now - 7200, lifetime: 3600), 401, "80200005"),
            (try account.jwt(lifetime: 2 * 86_400), 400, "80300036"),
            (huawei.issueAccessToken(appID: Self.appID), 401, "80200001"),
        ]
        for (jwt, status, code) in cases {
            let answer = try await v3(Self.v3Message(["t1"]), jwt: jwt)
            XCTAssertEqual(answer.status, status, "\(code): \(answer.body)")
            XCTAssertEqual(answer.body["code"] as? String, code, "\(answer.body)")
        }
        // Another project's path with this key.
        let elsewhere = await client.send("/v3/999/messages:send", headers: [("authorization", "Bearer \(try account.jwt())"), ("push-type", "0")],
                                          body: Self.v3Message(["t1"]))
        XCTAssertEqual(elsewhere.body["code"] as? String, "80200001")
        // A JWT expires on the side's clock too.
        let jwt = try account.jwt()
        huawei.clock.advance(by: 3601)
        let late = try await v3(Self.v3Message(["t1"]), jwt: jwt)
        XCTAssertEqual(late.body["code"] as? String, "80200005")
        XCTAssertEqual(huawei.stats.delivered, 0)
    }

    func testV3ChecksPushTypeAndPayload() async throws {
        let missing = try await v3(Self.v3Message(["t1"]), pushType: nil)
        XCTAssertEqual(missing.body["code"] as? String, "80100001", "\(missing.body)")
        let noCategory = try await v3(Self.v3Message(["t1"], category: nil))
        XCTAssertEqual(noCategory.body["code"] as? String, "80100003", "\(noCategory.body)")
        let background = try await v3(#"{"payload":{"extraData":"{\"cid\":\"c1\"}"},"target":{"token":["t2"]}}"#, pushType: "6")
        XCTAssertEqual(background.body["code"] as? String, "80000000", "\(background.body)")
        let ttl = try await v3(#"{"payload":{"extraData":"x"},"target":{"token":["t3"]},"pushOptions":{"ttl":1296001}}"#, pushType: "6")
        XCTAssertEqual(ttl.body["code"] as? String, "80100001", "\(ttl.body)")
        XCTAssertEqual(huawei.stats.deliveredByToken, ["t2": 1])
    }
}
