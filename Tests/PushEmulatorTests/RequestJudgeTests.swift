import APNsProvider
import PushEmulator
import Foundation
import Pusher
import TestSupport
import XCTest

/// Apple's rules as the emulator applies them, one reason at a time, without a network.
final class RequestJudgeTests: XCTestCase {
    var keyFile: String!
    var otherKeyFile: String!
    var judge: RequestJudge!
    let now: Int64 = 1_800_000_000
    let good = String(repeating: "ab", count: 32)

    override func setUp() async throws {
        let directory = makeTemporaryDirectory("judge")
        keyFile = try generateP8Key(in: directory)
        otherKeyFile = directory + "/other.p8"
        _ = try runCommand(which("openssl")!, ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", otherKeyFile])
        var configuration = EmulatorConfiguration()
        configuration.keys = [.init(keyID: "KEY1234567", teamID: "TEAM123456", keyFile: keyFile),
                              .init(keyID: "KEY7654321", teamID: "TEAM999999", keyFile: otherKeyFile)]
        configuration.topics = ["com.example.chat"]
        configuration.unregistered = [String(repeating: "dd", count: 32): 1_700_000_000_000]
        configuration.tokenTopics = [String(repeating: "ee", count: 32): "com.example.other"]
        configuration.scripted = [.init(prefix: "5030", status: 503, reason: "ServiceUnavailable")]
        judge = try RequestJudge(configuration: configuration)
    }

    private func jwt(key: String? = nil, keyID: String = "KEY1234567", team: String = "TEAM123456", issuedAt: Int64? = nil) throws -> String {
        try JWTSigner(keyFile: key ?? keyFile, keyID: keyID, teamID: team).token(issuedAt: issuedAt ?? now - 10)
    }

    private func request(token: String? = nil, method: String = "POST", headers: [String: String] = [:],
                         body: String = #"{"aps":{"alert":"hi"}}"#, bearer: String?? = nil) throws -> IncomingRequest {
        var all: [(name: String, value: String)] = [("apns-topic", "com.example.chat"), ("apns-push-type", "alert")]
        for (name, value) in headers {
            all.removeAll { $0.name == name }
            if !value.isEmpty { all.append((name, value)) }
        }
        switch bearer {
        case .none: all.append(("authorization", "bearer \(try jwt())"))
        case .some(.some(let token)): all.append(("authorization", "bearer \(token)"))
        case .some(.none): break
        }
        return IncomingRequest(method: method, path: "/3/device/\(token ?? good)", headers: all, body: Array(body.utf8))
    }

    private func verdict(_ request: IncomingRequest, _ connection: ConnectionState = ConnectionState(certificateAuthenticated: false),
                         at time: Int64? = nil) -> String {
        let answer = judge.judge(request, connection: connection, nowSeconds: time ?? now, random: { 1 })
        return "\(answer.status) \(answer.reason ?? "")".trimmingCharacters(in: .whitespaces)
    }

    func testAGoodRequestIsDeliveredAndItsApnsIdEchoed() throws {
        let id = "123e4567-e89b-12d3-a456-426614174000"
        let answer = judge.judge(try request(headers: ["apns-id": id]), connection: ConnectionState(certificateAuthenticated: false),
                                 nowSeconds: now, random: { 1 })
        XCTAssertEqual(answer.status, 200)
        XCTAssertEqual(answer.apnsID, id)
        XCTAssertNil(answer.body)
        let generated = judge.judge(try request(), connection: ConnectionState(certificateAuthenticated: false), nowSeconds: now)
        XCTAssertNotNil(UUID(uuidString: generated.apnsID), "an apns-id is generated when absent")
    }

    func testEachReasonOfTheRequestItself() throws {
        XCTAssertEqual(verdict(try request(method: "GET")), "405 MethodNotAllowed")
        XCTAssertEqual(verdict(IncomingRequest(method: "POST", path: "/2/device/aa", headers: [], body: [])), "404 BadPath")
        XCTAssertEqual(verdict(try request(token: "")), "400 MissingDeviceToken")
        XCTAssertEqual(verdict(try request(token: "xyz")), "400 BadDeviceToken")
        XCTAssertEqual(verdict(try request(headers: ["apns-topic": ""])), "400 MissingTopic")
        XCTAssertEqual(verdict(try request(headers: ["apns-topic": "com.evil.app"])), "400 TopicDisallowed")
        XCTAssertEqual(verdict(try request(headers: ["apns-topic": "com.example.chat.voip", "apns-push-type": "voip"])), "200")
        XCTAssertEqual(verdict(try request(headers: ["apns-push-type": "fax"])), "400 InvalidPushType")
        XCTAssertEqual(verdict(try request(headers: ["apns-priority": "7"])), "400 BadPriority")
        XCTAssertEqual(verdict(try request(headers: ["apns-push-type": "background", "apns-priority": "10"])), "400 BadPriority")
        XCTAssertEqual(verdict(try request(headers: ["apns-expiration": "soon"])), "400 BadExpirationDate")
        XCTAssertEqual(verdict(try request(headers: ["apns-collapse-id": String(repeating: "c", count: 65)])), "400 BadCollapseId")
        XCTAssertEqual(verdict(try request(headers: ["apns-id": "not-a-uuid"])), "400 BadMessageId")
        XCTAssertEqual(verdict(try request(body: "")), "400 PayloadEmpty")
        XCTAssertEqual(verdict(try request(body: "{" + String(repeating: " ", count: 4096) + "}")), "413 PayloadTooLarge")
        XCTAssertEqual(verdict(try request(headers: ["apns-push-type": "voip", "apns-topic": "com.example.chat.voip"],
                                           body: "{" + String(repeating: " ", count: 4096) + "}")), "200", "voip allows 5120 bytes")
        var duplicated = try request()
        duplicated.headers.append(("apns-topic", "com.example.chat"))
        XCTAssertEqual(verdict(duplicated), "400 DuplicateHeaders")
    }

    func testDeviceStateAndScriptedFaults() throws {
        let unregistered = judge.judge(try request(token: String(repeating: "dd", count: 32)),
                                       connection: ConnectionState(certificateAuthenticated: false), nowSeconds: now)
        XCTAssertEqual(unregistered.status, 410)
        XCTAssertEqual(unregistered.body, #"{"reason":"Unregistered","timestamp":1700000000000}"#)
        XCTAssertEqual(verdict(try request(token: String(repeating: "ee", count: 32))), "400 DeviceTokenNotForTopic")
        XCTAssertEqual(verdict(try request(token: "5030" + String(repeating: "0", count: 60))), "503 ServiceUnavailable")
    }

    func testProviderTokenRules() throws {
        XCTAssertEqual(verdict(try request(bearer: .some(nil))), "403 MissingProviderToken")
        XCTAssertEqual(verdict(try request(bearer: "garbage")), "403 InvalidProviderToken")
        XCTAssertEqual(verdict(try request(bearer: try jwt(keyID: "UNKNOWN123"))), "403 InvalidProviderToken", "unknown kid")
        XCTAssertEqual(verdict(try request(bearer: try jwt(team: "WRONGTEAM1"))), "403 InvalidProviderToken", "iss is not the key's team")
        XCTAssertEqual(verdict(try request(bearer: try jwt(key: otherKeyFile))), "403 InvalidProviderToken", "signed by another key")
        XCTAssertEqual(verdict(try request(bearer: try jwt(issuedAt: now - 3700))), "403 ExpiredProviderToken")
        XCTAssertEqual(verdict(try request(bearer: .some(nil)), ConnectionState(certificateAuthenticated: true)), "200",
                       "certificate auth needs no token")

        let connection = ConnectionState(certificateAuthenticated: false)
        let first = try jwt(issuedAt: now)
        XCTAssertEqual(verdict(try request(bearer: first), connection), "200")
        XCTAssertEqual(verdict(try request(bearer: first), connection, at: now + 600), "200", "the same token keeps working")
        XCTAssertEqual(verdict(try request(bearer: try jwt(issuedAt: now + 600)), connection, at: now + 600),
                       "429 TooManyProviderTokenUpdates", "a new token within 20 minutes on one connection")
        XCTAssertEqual(verdict(try request(bearer: first), connection, at: now + 3601), "403 ExpiredProviderToken",
                       "a token older than an hour, even one the connection knows")
        XCTAssertEqual(verdict(try request(bearer: try jwt(issuedAt: now + 3000)), connection, at: now + 3000), "200",
                       "renewal after 20 minutes is fine")
        XCTAssertEqual(verdict(try request(bearer: try jwt(key: otherKeyFile, keyID: "KEY7654321", team: "TEAM999999", issuedAt: now + 4300)),
                               connection, at: now + 4300), "403 InvalidProviderToken", "one team per connection")
    }

    func testRandomFaultsAtTheConfiguredShare() throws {
        var configuration = EmulatorConfiguration()
        configuration.failureRate = 0.5
        configuration.failureStatuses = [429]
        let faulty = try RequestJudge(configuration: configuration)
        let connection = ConnectionState(certificateAuthenticated: true)
        let request = IncomingRequest(method: "POST", path: "/3/device/\(good)", headers: [("apns-topic", "a.b")], body: Array("{}".utf8))
        XCTAssertEqual(faulty.judge(request, connection: connection, nowSeconds: now, random: { 0.2 }).reason, "TooManyRequests")
        XCTAssertEqual(faulty.judge(request, connection: connection, nowSeconds: now, random: { 0.7 }).status, 200)
    }
}
