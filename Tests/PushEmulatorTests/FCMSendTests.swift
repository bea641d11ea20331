@testable import FCMProvider
import Foundation
@testable import PushEmulator
import TestSupport
import XCTest

/// The emulator's FCM `messages:send`, reached over HTTP/2 + TLS on its FCM listener: what it delivers, FCM's
/// answers by token prefix, the bearer and project checks, the faults, and FCM's 100 streams per connection.
final class FCMSendTests: XCTestCase {
    static let path = "/v1/projects/\(ServiceAccountFixture.projectID)/messages:send"

    private var account: ServiceAccountFixture!
    private var server: EmulatorStandIn!

    override func setUp() async throws {
        account = try ServiceAccountFixture()
        let trusted = account.trusted
        server = try await EmulatorStandIn {
            $0.fcmServiceAccounts = [trusted]
            $0.fcmPort = 0
        }
    }

    override func tearDown() async throws {
        await server?.stop()
    }

    private var fcm: FCMSide { server.emulator.fcm }

    /// An access token as the token endpoint issues them (FCMTokenEndpointTests covers the exchange itself).
    private func accessToken() -> String {
        server.emulator.fcmTokens.issue(clientEmail: account.clientEmail, now: Date().timeIntervalSince1970).token
    }

    private func client(port: Int? = nil, connections: Int = 1) -> FCMTestClient {
        FCMTestClient(port: port ?? server.emulator.fcmPort, caFile: server.caFile, connections: connections)
    }

    /// One request each, answers in order.
    private func send(_ bodies: [String], bearer: String? = nil, path: String = FCMSendTests.path,
                      port: Int? = nil) async -> [(status: Int, body: [String: Any])] {
        let bearer = bearer ?? accessToken()
        let outcome = await client(port: port).run(bodies.map { FCMTestClient.send(path: path, bearer: bearer, body: $0) })
        return bodies.indices.map { outcome.answers[$0] ?? (0, [:]) }
    }

    private func assertError(_ answer: (status: Int, body: [String: Any]), _ status: Int, _ googleStatus: String, errorCode: String?,
                             file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(answer.status, status, "\(answer.body)", file: file, line: line)
        XCTAssertEqual(answer.body.fcmError["code"] as? Int, status, file: file, line: line)
        XCTAssertEqual(answer.body.fcmError["status"] as? String, googleStatus, "\(answer.body)", file: file, line: line)
        XCTAssertEqual(answer.body.fcmErrorCode, errorCode, "\(answer.body)", file: file, line: line)
        XCTAssertNotNil(answer.body.fcmError["message"] as? String, file: file, line: line)
    }

    func testAValidMessageIsDeliveredCountedAndRecorded() async throws {
        let token = "dGVzdC10b2tlbi0x:APA91bH_-example.token"
        let bearer = accessToken()
        let answers = await send([FCMTestClient.message(token: token, extra: #""android":{"priority":"high","ttl":"3600s","collapse_key":"chat"}"#)],
                                 bearer: bearer)
        XCTAssertEqual(answers[0].status, 200, "\(answers[0].body)")
        let name = answers[0].body["name"] as? String ?? ""
        XCTAssertTrue(name.hasPrefix("projects/\(ServiceAccountFixture.projectID)/messages/"), name)
        XCTAssertEqual(fcm.stats.deliveredCount(token: token), 1)
        XCTAssertEqual(fcm.stats.delivered, 1)
        XCTAssertEqual(fcm.stats.count(status: 200), 1)
        let last = try XCTUnwrap(fcm.stats.lastRequest)
        XCTAssertEqual(last.path, Self.path)
        XCTAssertEqual(last.header("authorization"), "Bearer \(bearer)")
        XCTAssertEqual(last.header("content-type"), "application/json")
        XCTAssertEqual((jsonObject(last.body)["message"] as? [String: Any])?["token"] as? String, token)

        // validate_only: FCM's fake name, nothing delivered.
        let check = await send([#"{"validate_only":true,"message":{"token":"\#(token)"}}"#], bearer: bearer)
        XCTAssertEqual(check[0].body["name"] as? String, "projects/\(ServiceAccountFixture.projectID)/messages/fake_message_id")
        XCTAssertEqual(fcm.stats.deliveredCount(token: token), 1)
        XCTAssertEqual(fcm.stats.validatedOnly, 1)

        // The main (APNs) listener answers FCM too, and its stats page carries the FCM counters.
        let main = await send([FCMTestClient.message(token: "other")], bearer: bearer, port: server.emulator.port)
        XCTAssertEqual(main[0].status, 200, "\(main[0].body)")
        XCTAssertEqual(fcm.stats.deliveredByToken, [token: 1, "other": 1])
        XCTAssertTrue(fcm.stats.duplicates.isEmpty)
        let stats = jsonObject(server.emulator.stats.json)["fcm"] as? [String: Any] ?? [:]
        XCTAssertEqual(stats["delivered"] as? Int, 2, "\(stats)")
        XCTAssertEqual(stats["duplicate_tokens"] as? Int, 0, "\(stats)")
        XCTAssertEqual(server.emulator.stats.requests, 0, "FCM requests are not counted as APNs's")
    }

    func testErrorsByTokenPrefix() async throws {
        let cases: [(token: String, status: Int, googleStatus: String, errorCode: String?)] = [
            ("unregistered-1", 404, "NOT_FOUND", "UNREGISTERED"),
            ("badtoken-1", 400, "INVALID_ARGUMENT", "INVALID_ARGUMENT"),
            ("invalid-1", 400, "INVALID_ARGUMENT", "INVALID_ARGUMENT"),
            ("mismatch-1", 403, "PERMISSION_DENIED", "SENDER_ID_MISMATCH"),
            ("thirdparty-1", 401, "UNAUTHENTICATED", "THIRD_PARTY_AUTH_ERROR"),
            ("denied-1", 403, "PERMISSION_DENIED", nil),
            ("quota-1", 429, "RESOURCE_EXHAUSTED", "QUOTA_EXCEEDED"),
            ("unavailable-1", 503, "UNAVAILABLE", "UNAVAILABLE"),
            ("internal-1", 500, "INTERNAL", "INTERNAL"),
        ]
        let answers = await send(cases.map { FCMTestClient.message(token: $0.token) })
        for (answer, expected) in zip(answers, cases) {
            assertError(answer, expected.status, expected.googleStatus, errorCode: expected.errorCode)
        }
        XCTAssertEqual(answers[1].body.fcmError["message"] as? String, "The registration token is not a valid FCM registration token")
        XCTAssertEqual(fcm.stats.delivered, 0)
        XCTAssertEqual(fcm.stats.count(reason: "UNREGISTERED"), 1)
        XCTAssertEqual(fcm.stats.count(reason: "PERMISSION_DENIED"), 1)
        XCTAssertEqual(fcm.stats.count(status: 400), 2)
    }

    func testBodiesFCMRejectsAreInvalidArgument() async throws {
        let bad: [(body: String, words: String)] = [
            ("not json", "Invalid JSON payload"),
            (#"{"message":{"token":"t"},"extra":1}"#, #"Unknown name "extra""#),
            (#"{"message":{"token":"t","colour":"red"}}"#, #"Unknown name "colour" at 'message'"#),
            (#"{"message":{"notification":{"title":"x"}}}"#, "Recipient of the message is not set."),
            (#"{"message":{"topic":"news"}}"#, "'topic' messages are not supported"),
            (#"{"message":{"condition":"'a' in topics"}}"#, "'condition' messages are not supported"),
            (#"{"message":{"token":"t","topic":"news"}}"#, "oneof field 'target' is already set"),
            (#"{"message":{"token":"t","data":{"n":1}}}"#, "Invalid value at 'message.data[0].value' (TYPE_STRING)"),
            (#"{"message":{"token":"t","data":"x"}}"#, "Invalid value at 'message.data'"),
            (#"{"message":{"token":"t","data":{"from":"me"}}}"#, "Invalid data payload key: from"),
            (#"{"message":{"token":"t","notification":[1]}}"#, "Invalid value at 'message.notification'"),
            (#"{"message":{"token":"t","android":"high"}}"#, "Invalid value at 'message.android'"),
            (#"{"message":{"token":"t","android":{"priority":"urgent"}}}"#, "message.android.priority"),
            (#"{"message":{"token":"t","android":{"ttl":"10"}}}"#, "message.android.ttl"),
            (#"{"message":{"token":"t","android":{"ttl":"2419201s"}}}"#, "4 weeks"),
            (#"{"message":{"token":"t","android":{"collapse_key":5}}}"#, "message.android.collapse_key"),
            (#"{"message":{"token":"t","android":{"speed":"fast"}}}"#, #"Unknown name "speed" at 'message.android'"#),
            (#"{"message":{"token":"t","data":{"big":"\#(String(repeating: "x", count: 4096))"}}}"#, "too big"),
        ]
        let answers = await send(bad.map(\.body))
        for (answer, expected) in zip(answers, bad) {
            assertError(answer, 400, "INVALID_ARGUMENT", errorCode: "INVALID_ARGUMENT")
            let message = answer.body.fcmError["message"] as? String ?? ""
            XCTAssertTrue(message.contains(expected.words), "\(expected.body.prefix(80)): \(message)")
        }
        // A malformed token is the token error senders turn into feedback, not a bad message.
        let badToken = await send([FCMTestClient.message(token: "has space")])
        XCTAssertEqual(badToken[0].body.fcmError["message"] as? String, "The registration token is not a valid FCM registration token")

        let good = [
            #"{"message":{"token":"t1","data":{"a":"1"},"android":{"collapseKey":"c","priority":"normal","ttl":"0s","directBootOk":true}}}"#,
            #"{"message":{"token":"t2","android":{"ttl":"3.5s","restricted_package_name":"com.example","notification":{"channel_id":"c"}},"apns":{},"fcm_options":{}}}"#,
            #"{"message":{"token":"t3","data":{"big":"\#(String(repeating: "x", count: 4000))"}}}"#,
        ]
        for answer in await send(good) { XCTAssertEqual(answer.status, 200, "\(answer.body)") }
        XCTAssertEqual(fcm.stats.delivered, 3)
    }

    func testARejectedAccessTokenIs401WithoutDetailsAndAnotherProjectIs403() async throws {
        let bearer = accessToken()
        fcm.revokeAccessTokens()
        let revoked = await send([FCMTestClient.message(token: "t")], bearer: bearer)
        assertError(revoked[0], 401, "UNAUTHENTICATED", errorCode: nil)
        XCTAssertNil(revoked[0].body.fcmError["details"], "no details: the sender renews its access token")
        XCTAssertTrue((revoked[0].body.fcmError["message"] as? String ?? "").hasPrefix("Request had invalid authentication credentials"))
        let unknown = await send([FCMTestClient.message(token: "t")], bearer: "ya29.never-issued")
        assertError(unknown[0], 401, "UNAUTHENTICATED", errorCode: nil)
        let missing = await client().run([FCMTestClient.send(path: Self.path, bearer: nil, body: FCMTestClient.message(token: "t"))])
        XCTAssertEqual(missing.answers[0]?.status, 401)

        server.emulator.fcmTokens.setLifetime(seconds: 1)
        let shortLived = accessToken()
        try await eventually { self.server.emulator.fcmTokens.check(bearer: shortLived) == .expired }
        let expired = await send([FCMTestClient.message(token: "t")], bearer: shortLived)
        assertError(expired[0], 401, "UNAUTHENTICATED", errorCode: nil)

        server.emulator.fcmTokens.setLifetime(seconds: 3600)
        let fresh = accessToken()
        let elsewhere = await send([FCMTestClient.message(token: "t")], bearer: fresh, path: "/v1/projects/someone-else/messages:send")
        assertError(elsewhere[0], 403, "PERMISSION_DENIED", errorCode: nil)
        let wrongPath = await send([FCMTestClient.message(token: "t")], bearer: fresh, path: "/v1/projects/\(ServiceAccountFixture.projectID)/messages:batch")
        XCTAssertEqual(wrongPath[0].status, 404)
        let good = await send([FCMTestClient.message(token: "t")], bearer: fresh)
        XCTAssertEqual(good[0].status, 200)
        XCTAssertEqual(fcm.stats.count(reason: "UNAUTHENTICATED"), 4)
        XCTAssertEqual(fcm.stats.deliveredCount(token: "t"), 1)
    }

    func testInjected429And503CarryRetryAfter() async throws {
        let url = server.emulator.fcmEndpoint + Self.path
        let bearer = accessToken()
        fcm.updateFaults {
            $0.quotaExceededRate = 1
            $0.retryAfterSeconds = 7
        }
        let quota = try curlFCM(url: url, caFile: server.caFile, bearer: bearer, body: FCMTestClient.message(token: "t"))
        XCTAssertEqual(quota.status, 429, "\(quota.body)")
        XCTAssertEqual(quota.headers["retry-after"], "7")
        XCTAssertEqual(quota.body.fcmErrorCode, "QUOTA_EXCEEDED")
        XCTAssertEqual(quota.body.fcmError["status"] as? String, "RESOURCE_EXHAUSTED")

        fcm.updateFaults {
            $0.quotaExceededRate = 0
            $0.unavailableRate = 1
            $0.retryAfterAsHTTPDate = true
        }
        let unavailable = try curlFCM(url: url, caFile: server.caFile, bearer: bearer, body: FCMTestClient.message(token: "t"))
        XCTAssertEqual(unavailable.status, 503)
        XCTAssertEqual(unavailable.body.fcmErrorCode, "UNAVAILABLE")
        let date = try XCTUnwrap(unavailable.headers["retry-after"])
        XCTAssertTrue(date.hasSuffix(" GMT") && date.count == 29, date)

        // Token prefixes get the header too; an error that is not 429/503 does not.
        fcm.setFaults(FCMFaults())
        fcm.updateFaults { $0.retryAfterSeconds = 3 }
        XCTAssertEqual(try curlFCM(url: url, caFile: server.caFile, bearer: bearer, body: FCMTestClient.message(token: "quota-x")).headers["retry-after"], "3")
        XCTAssertNil(try curlFCM(url: url, caFile: server.caFile, bearer: bearer, body: FCMTestClient.message(token: "internal-x")).headers["retry-after"])

        // Queued answers: exactly the next two, then delivered again.
        XCTAssertTrue(fcm.failNext(2, with: "UNAVAILABLE"))
        XCTAssertFalse(fcm.failNext(1, with: "NO_SUCH_CODE"))
        let statuses = await send((0..<3).map { _ in FCMTestClient.message(token: "t") }, bearer: bearer).map(\.status)
        XCTAssertEqual(statuses.sorted(), [200, 503, 503])
        XCTAssertEqual(fcm.stats.deliveredCount(token: "t"), 1)
        XCTAssertEqual(fcm.stats.count(reason: "UNAVAILABLE"), 3)
        XCTAssertEqual(fcm.stats.count(reason: "QUOTA_EXCEEDED"), 2)
    }

    func testTheFCMListenerAllows100StreamsPerConnection() async throws {
        // A second per answer: all of the first 100 streams are open at once even on a loaded machine.
        fcm.updateFaults { $0.latencyMillis = 1000 }
        let bearer = accessToken()
        let tokens = (0..<200).map { "stream-\($0)" }
        let started = ContinuousClock.now
        let outcome = await client().run(tokens.map { FCMTestClient.send(path: Self.path, bearer: bearer, body: FCMTestClient.message(token: $0)) })
        XCTAssertEqual(outcome.streamsLimitAtOpen, 100, "SETTINGS_MAX_CONCURRENT_STREAMS 100 from the first SETTINGS")
        XCTAssertEqual(outcome.largestStreamsLimit, 100, "never raised")
        XCTAssertEqual(outcome.connectionsOpened, 1)
        XCTAssertEqual(outcome.answers.values.filter { $0.status == 200 }.count, 200)
        XCTAssertEqual(fcm.stats.peakConcurrentStreams, 100, "100 streams ran at once on the one connection")
        XCTAssertEqual(fcm.stats.refusedStreams, 0)
        XCTAssertEqual(Set(fcm.stats.deliveredByToken.keys), Set(tokens))
        XCTAssertTrue(fcm.stats.duplicates.isEmpty)
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(30), "two rounds of a second, not 200")
        XCTAssertGreaterThanOrEqual(ContinuousClock.now - started, .seconds(2), "the latency applies")

        // The main listener keeps APNs's rule: one stream until a request authenticates (here, an FCM one).
        let main = await client(port: server.emulator.port).run([FCMTestClient.send(path: Self.path, bearer: bearer, body: FCMTestClient.message(token: "m"))])
        XCTAssertEqual(main.streamsLimitAtOpen, 1)
        XCTAssertEqual(main.answers[0]?.status, 200)
    }

    func testGoawayAfterNStreamsLosesNothing() async throws {
        fcm.updateFaults { $0.goawayAfterStreams = 10 }
        let bearer = accessToken()
        let tokens = (0..<40).map { "goaway-\($0)" }
        var client = client()
        client.streamCap = 5  // so that a connection's 10th answer comes before the client has sent all 40
        let outcome = await client.run(tokens.map { FCMTestClient.send(path: Self.path, bearer: bearer, body: FCMTestClient.message(token: $0)) })
        XCTAssertEqual(outcome.answers.values.filter { $0.status == 200 }.count, 40, "refused: \(outcome.refused), lost: \(outcome.lost)")
        XCTAssertEqual(outcome.lost, 0)
        XCTAssertGreaterThanOrEqual(fcm.stats.goAways, 3)
        XCTAssertGreaterThanOrEqual(outcome.goaways, 3)
        XCTAssertEqual(Set(fcm.stats.deliveredByToken.keys), Set(tokens))
        XCTAssertTrue(fcm.stats.duplicates.isEmpty, "\(fcm.stats.duplicates)")
    }

    func testDeliveredMessagesAreRecordedAsJSONLines() async throws {
        await server.stop()
        let record = makeTemporaryDirectory("fcm-record") + "/fcm.jsonl"
        let trusted = account.trusted
        server = try await EmulatorStandIn {
            $0.fcmServiceAccounts = [trusted]
            $0.fcmPort = 0
            $0.fcmRecordFile = record
        }
        _ = await send([FCMTestClient.message(token: "r1"), FCMTestClient.message(token: "unregistered-r2")])
        let lines = try String(contentsOfFile: record, encoding: .utf8).split(separator: "\n").map { jsonObject(String($0)) }
        XCTAssertEqual(lines.count, 1, "only delivered messages are recorded")
        XCTAssertEqual(lines.first?["provider"] as? String, "fcm")
        XCTAssertEqual(lines.first?["token"] as? String, "r1")
        XCTAssertTrue((lines.first?["name"] as? String ?? "").hasPrefix("projects/example-project/messages/"))
        XCTAssertEqual(((lines.first?["request"] as? [String: Any])?["message"] as? [String: Any])?["token"] as? String, "r1")
    }

    func testScheduledTokenFaults() async throws {
        await server.stop()
        let trusted = account.trusted
        server = try await EmulatorStandIn {
            $0.fcmServiceAccounts = [trusted]
            $0.fcmPort = 0
            $0.fcmTokenEndpointDownForSeconds = 3
            $0.fcmRevokeTokensEverySeconds = 1
        }
        let tokens = server.emulator.fcmTokens
        XCTAssertFalse(tokens.noteRequest(), "the token endpoint is down at start")
        let bearer = accessToken()
        try await eventually { tokens.check(bearer: bearer) == .revoked }
        try await eventually { tokens.noteRequest() }
    }
}
