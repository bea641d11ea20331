@testable import FCMProvider
import PushEmulator
import Foundation
import PushCore
import QueueProtocol
import RedisClient
import TestSupport
import XCTest

/// Issue 33: FCM HTTP v1 as a second provider, end to end: a real worker process, a real redis-server and the
/// emulator's FCM side over HTTP/2 and TLS (docs/message-format.md, docs/fcm.md, docs/configuration.md).
final class FCMDeliveryTests: XCTestCase {
    private func start(_ fcm: FCMStandIn, redis: RedisServer, id: String, _ extra: [String: String] = [:]) throws -> WorkerProcess {
        try WorkerProcess(environment: fcm.workerEnvironment(redis: redis, ["WORKER_ID": id].merging(extra) { $1 }),
                          logFile: makeTemporaryDirectory("fcm-\(id)") + "/worker.log")
    }

    private func drained(_ client: RedisConnection, worker id: String) async throws -> Bool {
        let keys = RedisKeys()
        let queued = try await client.length(keys.queue)
        let claimed = try await client.claimedCount(keys.processing(worker: id))
        return queued == 0 && claimed == 0
    }

    /// Every row of docs/fcm.md's table that ends a token, in one run mixed with APNs messages and merged
    /// FCM group messages: each delivered token exactly once, each dead token in feedback with
    /// `"provider": "fcm"`, each permanent failure a dead letter naming FCM's reason, nothing else.
    func testAMixedRunDeliversEachTokenOnceAndEndsEveryFCMAnswerAsTheSpecSays() async throws {
        let redis = try RedisServer()
        defer { redis.kill() }
        let fcm = try await FCMStandIn { $0.fcmFaults.retryAfterSeconds = 1 }
        let client = RedisConnection(url: redis.url, name: "test-client")
        addTeardownBlock { await client.close() }
        let keys = RedisKeys()
        var elements: [String] = []
        let plain = 600
        for n in 0..<plain {
            elements.append(fcmMessageJSON(id: "f\(n)", tokens: [fcmToken("d", n)]))
            elements.append(messageJSON(id: "a\(n)", tokens: [token("a1", n)]))
        }
        // Group messages with the same payload: merged into jobs of many tokens (docs/message-format.md).
        let groupTokens = (0..<200).map { fcmToken("g", $0) }
        for n in 0..<20 {
            elements.append(fcmMessageJSON(id: "g\(n)", tokens: Array(groupTokens[(n * 10)..<(n * 10 + 10)]), kind: "group", body: "group hello"))
        }
        elements.append(fcmMessageJSON(id: "dead", tokens: [fcmToken("unregistered", 1), fcmToken("d", 100_000)]))
        elements.append(fcmMessageJSON(id: "bad", tokens: [fcmToken("badtoken", 1)]))
        elements.append(fcmMessageJSON(id: "other", tokens: [fcmToken("mismatch", 1)]))
        elements.append(fcmMessageJSON(id: "busy", tokens: [fcmToken("unavailable", 1)]))
        elements.append(fcmMessageJSON(id: "unknown-app", tokens: [fcmToken("d", 100_001)], topic: "com.example.none"))
        try await client.lpush(keys.queue, elements)
        let port = freePort()
        // Long request timeouts: "each token once" must not depend on how fast the emulator (in this process) answers
        // hundreds of streams at once on a loaded machine (a request timed out is sent again).
        let worker = try start(fcm, redis: redis, id: "fcm-mixed", ["RETRY_MAX_ATTEMPTS": "3", "RETRY_BASE_DELAY_MS": "20",
                                                                  "RETRY_MAX_DELAY_MS": "50", "METRICS_LISTEN": "127.0.0.1:\(port)",
                                                                  "APNS_REQUEST_TIMEOUT_MS": "120000", "FCM_REQUEST_TIMEOUT_MS": "120000"])
        defer { worker.signal(SIGKILL) }

        try await eventually(timeout: .seconds(120)) { try await self.drained(client, worker: "fcm-mixed") }
        let delivered = fcm.fcm.stats.deliveredByToken
        let wanted = (0..<plain).map { fcmToken("d", $0) } + groupTokens + [fcmToken("d", 100_000)]
        XCTAssertEqual(wanted.filter { delivered[$0] != 1 }, [], "every FCM token delivered exactly once")
        XCTAssertEqual(fcm.fcm.stats.duplicates, [:])
        let apnsDelivered = Dictionary(grouping: fcm.apns.answered().filter { $0.status == 200 }, by: \.token).mapValues(\.count)
        XCTAssertEqual((0..<plain).filter { apnsDelivered[token("a1", $0)] != 1 }.count, 0, "every APNs token delivered exactly once")

        let feedback = try await client.strings(keys.feedback).map { jsonObject(Array($0.utf8)) }
        let feedbackReasons = Dictionary(uniqueKeysWithValues: feedback.map { ($0["token"] as? String ?? "", $0["reason"] as? String ?? "") })
        XCTAssertEqual(feedbackReasons[fcmToken("unregistered", 1)], "Unregistered")
        XCTAssertEqual(feedbackReasons[fcmToken("badtoken", 1)], "BadDeviceToken")
        XCTAssertEqual(feedbackReasons[fcmToken("mismatch", 1)], "SenderIdMismatch")
        XCTAssertEqual(feedback.count, 3, "\(feedback)")
        XCTAssertTrue(feedback.allSatisfy { $0["provider"] as? String == "fcm" }, "\(feedback)")

        let deadLetters = try await client.strings(keys.deadLetters).map { jsonObject(Array($0.utf8)) }
        let byID = Dictionary(deadLetters.map { (($0["message"] as? [String: Any])?["id"] as? String ?? "", $0) }) { first, _ in first }
        XCTAssertEqual(Set(byID.keys), ["busy", "unknown-app"], "\(deadLetters)")
        XCTAssertEqual(byID["busy"]?["reason"] as? String, "UNAVAILABLE", "503 retried up to max_attempts, then a dead letter")
        XCTAssertEqual(byID["busy"]?["provider"] as? String, "fcm")
        XCTAssertTrue((byID["unknown-app"]?["reason"] as? String ?? "").hasPrefix("TopicNotConfigured: no app in fcm.apps"), "\(deadLetters)")
        XCTAssertLessThanOrEqual(fcm.fcm.stats.peakConcurrentStreams, 100, "never more streams than FCM allows")
        let metrics = await httpGet("http://127.0.0.1:\(port)/metrics")?.body ?? ""
        XCTAssertGreaterThan(prometheusSample(metrics, "push_messages_merged_total") ?? 0, 0, "FCM group messages were merged")
        XCTAssertEqual(prometheusSample(metrics, "push_notifications_total",
                                        ["provider": "fcm", "app": FCMStandIn.topic, "outcome": "delivered", "reason": ""]),
                       Double(plain + groupTokens.count + 1))
        XCTAssertEqual(prometheusSample(metrics, "push_notifications_total",
                                        ["provider": "apns", "app": FCMStandIn.topic, "outcome": "delivered", "reason": ""]), Double(plain))
        XCTAssertEqual(prometheusSample(metrics, "push_provider_responses_total", ["provider": "fcm", "status": "404", "reason": "UNREGISTERED"]), 1)
        XCTAssertEqual(prometheusSample(metrics, "push_provider_access_token_renewals_total", ["provider": "fcm", "app": FCMStandIn.topic, "result": "ok"]), 1)
        worker.signal(SIGTERM)
        let status = await worker.waitForExit(timeout: 30)
        XCTAssertEqual(status, 0, worker.log.suffix(3000).description)
        await fcm.stop()
    }

    /// Access tokens that expire every few seconds and are all revoked mid-run: requests answered 401 renew
    /// the token and go again without spending attempts; nothing dead-lettered, nothing sent twice, and the
    /// renewals are no storm (at most one a second, and no more than the lifetimes and revocations call for).
    func testShortLivedAndRevokedAccessTokensLoseNothingAndMakeNoStorm() async throws {
        let redis = try RedisServer()
        defer { redis.kill() }
        let fcm = try await FCMStandIn {
            $0.fcmAccessTokenLifetimeSeconds = 4
            $0.fcmFaults.latencyMillis = 5
        }
        let client = RedisConnection(url: redis.url, name: "test-client")
        addTeardownBlock { await client.close() }
        let keys = RedisKeys()
        let total = 2000
        // Half now, half after the revocation: the run spans several token lifetimes (at least 10 s, below). Not
        // more: on a loaded machine the emulator in this process answers a few hundred FCM requests a second.
        try await client.lpush(keys.queue, (0..<total / 2).map { fcmMessageJSON(id: "t\($0)", tokens: [fcmToken("d", $0)]) })
        let started = ContinuousClock.now
        let worker = try start(fcm, redis: redis, id: "fcm-tokens", ["RETRY_MAX_ATTEMPTS": "2"])
        defer { worker.signal(SIGKILL) }
        try await eventually(timeout: .seconds(60)) { fcm.fcm.stats.delivered >= 500 }
        fcm.fcm.revokeAccessTokens()
        try await client.lpush(keys.queue, (total / 2..<total).map { fcmMessageJSON(id: "t\($0)", tokens: [fcmToken("d", $0)]) })
        // Past two lifetimes after the revocation, so that renewals on expiry are part of the run too.
        try await eventually(timeout: .seconds(120)) {
            try await self.drained(client, worker: "fcm-tokens") && ContinuousClock.now - started > .seconds(10)
        }
        let elapsed = ContinuousClock.now - started
        let delivered = fcm.fcm.stats.deliveredByToken
        XCTAssertEqual((0..<total).filter { delivered[fcmToken("d", $0)] != 1 }.count, 0, "every token delivered exactly once")
        try await assertEqual(try await client.length(keys.deadLetters), 0)
        XCTAssertGreaterThan(fcm.fcm.stats.count(status: 401), 0, "the revocation was seen")
        let requests = fcm.emulator.fcmTokens.requestCount
        let seconds = Int(elapsed.components.seconds) + 1
        // One renewal per half lifetime (2 s) plus one per rejection spell, never more than one a second.
        XCTAssertLessThanOrEqual(requests, seconds / 2 + 4, "\(requests) token requests in \(seconds) s")
        printFigure("access tokens: \(requests) token requests over \(elapsed) (lifetime 4 s, revoked once); 401 answers: \(fcm.fcm.stats.count(status: 401))")
        worker.signal(SIGTERM)
        _ = await worker.waitForExit(timeout: 30)
        await fcm.stop()
    }

    /// The token endpoint down when the worker starts: FCM messages wait (no attempt spent, nothing
    /// dead-lettered), readiness is false and says why, APNs messages go meanwhile; all delivered once it is back.
    func testATokenEndpointDownAtStartHoldsFCMAndNotAPNs() async throws {
        let redis = try RedisServer()
        defer { redis.kill() }
        let fcm = try await FCMStandIn()
        fcm.fcm.setTokenEndpointDown(true)
        let client = RedisConnection(url: redis.url, name: "test-client")
        addTeardownBlock { await client.close() }
        let keys = RedisKeys()
        try await client.lpush(keys.queue, (0..<200).flatMap {
            [fcmMessageJSON(id: "f\($0)", tokens: [fcmToken("d", $0)]), messageJSON(id: "a\($0)", tokens: [token("a1", $0)])]
        })
        let port = freePort()
        let worker = try start(fcm, redis: redis, id: "fcm-down", ["METRICS_LISTEN": "127.0.0.1:\(port)", "RETRY_MAX_ATTEMPTS": "2"])
        defer { worker.signal(SIGKILL) }

        try await eventually(timeout: .seconds(60)) { fcm.apns.answeredCount(status: 200) == 200 }
        var readiness: (status: Int, body: String)?
        try await eventually(timeout: .seconds(30)) {
            readiness = await httpGet("http://127.0.0.1:\(port)/readyz")
            return readiness?.body.contains("no credential for \(FCMStandIn.topic)") == true
        }
        XCTAssertEqual(readiness?.status, 200, "the pod stays ready: one app's credential holds that app alone")
        XCTAssertEqual(fcm.fcm.stats.requests, 0, "no FCM request without an access token")
        try await eventually(timeout: .seconds(30)) { fcm.emulator.fcmTokens.requestCount >= 2 }  // it keeps asking
        try await assertEqual(try await client.length(keys.deadLetters), 0)

        fcm.fcm.setTokenEndpointDown(false)
        try await eventually(timeout: .seconds(60)) { try await self.drained(client, worker: "fcm-down") }
        let delivered = fcm.fcm.stats.deliveredByToken
        XCTAssertEqual((0..<200).filter { delivered[fcmToken("d", $0)] != 1 }.count, 0)
        try await assertEqual(try await client.length(keys.deadLetters), 0)
        try await eventually(timeout: .seconds(30)) { await httpGet("http://127.0.0.1:\(port)/readyz")?.body == "ready\n" }
        worker.signal(SIGTERM)
        _ = await worker.waitForExit(timeout: 30)
        await fcm.stop()
    }

    /// A service account key the token endpoint refuses (`invalid_grant`): `/readyz` says so with no message
    /// waiting, since the worker asks for the token at start, not when the first message comes, and the pod stays
    /// ready (the app is held; other apps are served).
    func testARefusedKeyIsSaidByReadinessBeforeAnyMessageAndTheWorkerStaysReady() async throws {
        let redis = try RedisServer()
        defer { redis.kill() }
        let fcm = try await FCMStandIn { $0.fcmServiceAccounts = [] }  // the emulator knows no key: it refuses ours
        let port = freePort()
        let worker = try start(fcm, redis: redis, id: "fcm-refused", ["METRICS_LISTEN": "127.0.0.1:\(port)"])
        defer { worker.signal(SIGKILL) }
        var readiness: (status: Int, body: String)?
        try await eventually(timeout: .seconds(30)) {
            readiness = await httpGet("http://127.0.0.1:\(port)/readyz")
            return readiness?.body.contains("apps held: FCM rejected the credentials of \(FCMStandIn.topic): ") == true
        }
        XCTAssertEqual(readiness?.status, 200, "one app's key never takes the pod out of service")
        XCTAssertTrue(readiness?.body.contains("invalid_grant") == true, readiness?.body ?? "")
        XCTAssertEqual(fcm.fcm.stats.requests, 0, "no message was sent, nor waiting")
        worker.signal(SIGTERM)
        _ = await worker.waitForExit(timeout: 30)
        await fcm.stop()
    }

    /// A 429 for the project holds the whole project back until its Retry-After, and then everything goes;
    /// THIRD_PARTY_AUTH_ERROR (the Firebase project's APNs or web credential) fails only those tokens, after
    /// their attempts, and pauses nothing; PERMISSION_DENIED (our service account) pauses the app rather than
    /// dead-lettering its backlog.
    func testQuotaHoldsTheProjectThirdPartyAuthFailsTokensAndPermissionDeniedPausesTheApp() async throws {
        let redis = try RedisServer()
        defer { redis.kill() }
        let fcm = try await FCMStandIn { $0.fcmFaults.retryAfterSeconds = 2 }
        let client = RedisConnection(url: redis.url, name: "test-client")
        addTeardownBlock { await client.close() }
        let keys = RedisKeys()
        fcm.fcm.failNext(1, with: "QUOTA_EXCEEDED")
        try await client.lpush(keys.queue, (0..<300).map { fcmMessageJSON(id: "q\($0)", tokens: [fcmToken("d", $0)]) })
        let port = freePort()
        let worker = try start(fcm, redis: redis, id: "fcm-quota", ["METRICS_LISTEN": "127.0.0.1:\(port)", "RETRY_MAX_ATTEMPTS": "3",
                                                                  "RETRY_BASE_DELAY_MS": "20", "RETRY_MAX_DELAY_MS": "50"])
        defer { worker.signal(SIGKILL) }
        try await eventually(timeout: .seconds(60)) { fcm.fcm.stats.count(status: 429) == 1 }
        let held = ContinuousClock.now
        try await eventually(timeout: .seconds(60)) { try await self.drained(client, worker: "fcm-quota") }
        XCTAssertGreaterThanOrEqual(ContinuousClock.now - held, .seconds(1), "held back for the Retry-After (2 s, less what passed before the 429 was seen)")
        let delivered = fcm.fcm.stats.deliveredByToken
        XCTAssertEqual((0..<300).filter { delivered[fcmToken("d", $0)] != 1 }.count, 0)

        // THIRD_PARTY_AUTH_ERROR: those tokens spend their attempts and become dead letters with FCM's code as
        // reason and Google's words as detail; the app's Android tokens beside them are delivered, no pause.
        var mixed: [String] = []
        for n in 0..<20 {
            mixed.append(fcmMessageJSON(id: "p\(n)", tokens: [fcmToken("thirdparty", n)]))
            mixed.append(fcmMessageJSON(id: "e\(n)", tokens: [fcmToken("e", n)]))
        }
        try await client.lpush(keys.queue, mixed)
        try await eventually(timeout: .seconds(60)) { try await self.drained(client, worker: "fcm-quota") }
        let afterMixed = fcm.fcm.stats.deliveredByToken
        XCTAssertEqual((0..<20).filter { afterMixed[fcmToken("e", $0)] != 1 }.count, 0, "Android tokens beside them go on")
        let deadLetters = try await client.strings(keys.deadLetters).map { jsonObject(Array($0.utf8)) }
        XCTAssertEqual(deadLetters.count, 20, "\(deadLetters)")
        XCTAssertTrue(deadLetters.allSatisfy { $0["reason"] as? String == "THIRD_PARTY_AUTH_ERROR" && $0["attempts"] as? Int == 3 }, "\(deadLetters)")
        XCTAssertTrue(deadLetters.allSatisfy { $0["detail"] as? String == "Auth error from APNS or Web Push Service" }, "\(deadLetters)")
        var metrics = await httpGet("http://127.0.0.1:\(port)/metrics")?.body ?? ""
        XCTAssertEqual(prometheusSample(metrics, "push_provider_app_paused", ["provider": "fcm", "app": FCMStandIn.topic]) ?? 0, 0, "no pause for another platform's credential")

        // PERMISSION_DENIED: the app pauses, readiness names it (the pod still ready), nothing is dead-lettered.
        try await client.lpush(keys.queue, (0..<50).map { fcmMessageJSON(id: "x\($0)", tokens: [fcmToken("denied", $0)]) })
        try await eventually(timeout: .seconds(30)) {
            guard let ready = await httpGet("http://127.0.0.1:\(port)/readyz") else { return false }
            return ready.status == 200 && ready.body.contains("apps held: FCM rejected the credentials of \(FCMStandIn.topic): PERMISSION_DENIED")
        }
        metrics = await httpGet("http://127.0.0.1:\(port)/metrics")?.body ?? ""
        XCTAssertEqual(prometheusSample(metrics, "push_provider_app_paused", ["provider": "fcm", "app": FCMStandIn.topic]), 1)
        try await assertEqual(try await client.length(keys.deadLetters), 20)
        worker.signal(SIGTERM)
        _ = await worker.waitForExit(timeout: 30)
        await fcm.stop()
    }

    /// One device over FCM's per-device rate (the emulator models it) backs off that token only: the project is
    /// never held, so every other Android token of the app goes at once.
    func testOneDeviceOverItsRateHoldsNothingElse() async throws {
        let redis = try RedisServer()
        defer { redis.kill() }
        let fcm = try await FCMStandIn { $0.fcmFaults.deviceRatePerMinute = 5 }
        let client = RedisConnection(url: redis.url, name: "test-client")
        addTeardownBlock { await client.close() }
        let keys = RedisKeys()
        // 2,000 other tokens, with one of the busy device's 20 messages every 100 (the emulator in this process
        // answers a few hundred FCM requests a second on a loaded machine: 10,000 took it most of the bound).
        var elements: [String] = []
        for n in 0..<2_000 {
            elements.append(fcmMessageJSON(id: "o\(n)", tokens: [fcmToken("o", n)]))
            if n % 100 == 0 { elements.append(fcmMessageJSON(id: "busy\(n)", tokens: [fcmToken("busy", 1)])) }
        }
        try await client.lpush(keys.queue, elements)
        let worker = try start(fcm, redis: redis, id: "fcm-device", ["RETRY_MAX_ATTEMPTS": "2", "RETRY_BASE_DELAY_MS": "20",
                                                                    "RETRY_MAX_DELAY_MS": "50", "LOG_LEVEL": "info"])
        defer { worker.signal(SIGKILL) }
        let started = ContinuousClock.now
        try await eventually(timeout: .seconds(120)) { try await self.drained(client, worker: "fcm-device") }
        let took = ContinuousClock.now - started
        let delivered = fcm.fcm.stats.deliveredByToken
        XCTAssertEqual((0..<2_000).filter { delivered[fcmToken("o", $0)] != 1 }.count, 0, "every other token delivered once")
        printFigure("FCM: 2,000 other tokens delivered once in \(took) beside one device over its rate, with no project hold")
        // Five a minute: five in a run under a minute (a loaded machine's longer run may start another minute).
        let busy = delivered[fcmToken("busy", 1)] ?? 0
        let minutes = Int(took.components.seconds / 60) + 1
        XCTAssertTrue(busy >= 5 && busy <= 5 * minutes, "the busy device got its rate's worth: \(busy) in \(took)")
        let deadLetters = try await client.strings(keys.deadLetters).map { jsonObject(Array($0.utf8)) }
        XCTAssertEqual(deadLetters.count, 20 - busy, "the rest spent their attempts on the device's quota: \(deadLetters)")
        XCTAssertTrue(deadLetters.allSatisfy { $0["reason"] as? String == "QUOTA_EXCEEDED" }, "\(deadLetters)")
        XCTAssertFalse(worker.log.contains("asks this project to slow down"), "a device's rate never holds the project")
        worker.signal(SIGTERM)
        _ = await worker.waitForExit(timeout: 30)
        await fcm.stop()
    }

    /// Apple's one-stream-until-success rule is APNs's: an FCM connection uses the servers' SETTINGS from its
    /// first request, also when every answer so far was a 404 (a cleanup of dead tokens).
    func testFCMConnectionsUseTheServersStreamsFromTheFirstRequest() async throws {
        let redis = try RedisServer()
        defer { redis.kill() }
        let fcm = try await FCMStandIn { $0.fcmFaults.latencyMillis = 200 }
        let client = RedisConnection(url: redis.url, name: "test-client")
        addTeardownBlock { await client.close() }
        try await client.lpush(RedisKeys().queue, (0..<400).map { fcmMessageJSON(id: "u\($0)", tokens: [fcmToken("unregistered", $0)]) })
        let worker = try start(fcm, redis: redis, id: "fcm-streams", ["FCM_CONNECTIONS": "2", "FCM_MAX_CONNECTIONS": "2"])
        defer { worker.signal(SIGKILL) }
        try await eventually(timeout: .seconds(60)) { try await self.drained(client, worker: "fcm-streams") }
        XCTAssertEqual(fcm.fcm.stats.count(status: 404), 400, "every answer a 404")
        XCTAssertGreaterThan(fcm.fcm.stats.peakConcurrentStreams, 2, "more than one stream per connection before any 2xx")
        XCTAssertLessThanOrEqual(fcm.fcm.stats.peakConcurrentStreams, 200, "never more than the servers allow")
        worker.signal(SIGTERM)
        _ = await worker.waitForExit(timeout: 30)
        await fcm.stop()
    }

    /// A worker with FCM apps only (no apns.apps) starts and delivers.
    func testAWorkerWithFCMAppsOnlyStartsAndDelivers() async throws {
        let redis = try RedisServer()
        defer { redis.kill() }
        let fcm = try await FCMStandIn()
        let client = RedisConnection(url: redis.url, name: "test-client")
        addTeardownBlock { await client.close() }
        var environment = fcm.workerEnvironment(redis: redis, ["WORKER_ID": "fcm-only"])
        for key in environment.keys where key.hasPrefix("APNS_APPS_") { environment.removeValue(forKey: key) }
        try await client.lpush(RedisKeys().queue, (0..<50).map { fcmMessageJSON(id: "f\($0)", tokens: [fcmToken("d", $0)]) })
        let worker = try WorkerProcess(environment: environment, logFile: makeTemporaryDirectory("fcm-only") + "/worker.log")
        defer { worker.signal(SIGKILL) }
        try await eventually(timeout: .seconds(60)) { try await self.drained(client, worker: "fcm-only") }
        let delivered = fcm.fcm.stats.deliveredByToken
        XCTAssertEqual((0..<50).filter { delivered[fcmToken("d", $0)] != 1 }.count, 0, worker.log)
        worker.signal(SIGTERM)
        let status = await worker.waitForExit(timeout: 30)
        XCTAssertEqual(status, 0, worker.log)
        await fcm.stop()
    }

    /// SIGKILL with FCM requests in flight: a second worker recovers the claims; every token is delivered
    /// (a request in flight at the kill may be delivered again: counted, never lost).
    func testSIGKILLWithFCMInFlightLosesNothing() async throws {
        let redis = try RedisServer()
        defer { redis.kill() }
        let fcm = try await FCMStandIn { $0.fcmFaults.latencyMillis = 20 }
        let client = RedisConnection(url: redis.url, name: "test-client")
        addTeardownBlock { await client.close() }
        let keys = RedisKeys()
        let total = 3000
        try await client.lpush(keys.queue, (0..<total).map { fcmMessageJSON(id: "k\($0)", tokens: [fcmToken("d", $0)]) })
        let first = try start(fcm, redis: redis, id: "fcm-killed", ["REDIS_HEARTBEAT_TTL_MS": "2000"])
        try await eventually(timeout: .seconds(60)) { fcm.fcm.stats.delivered >= 500 }
        first.signal(SIGKILL)
        _ = await first.waitForExit(timeout: 10)
        let second = try start(fcm, redis: redis, id: "fcm-heir", ["REDIS_HEARTBEAT_TTL_MS": "2000"])
        defer { second.signal(SIGKILL) }
        try await eventually(timeout: .seconds(120)) {
            let left = try await client.claimedCount(keys.processing(worker: "fcm-killed"))
            return try await self.drained(client, worker: "fcm-heir") && left == 0
        }
        let delivered = fcm.fcm.stats.deliveredByToken
        XCTAssertEqual((0..<total).filter { (delivered[fcmToken("d", $0)] ?? 0) < 1 }.count, 0, "nothing lost")
        let twice = fcm.fcm.stats.duplicates.count
        printFigure("SIGKILL with FCM in flight: \(total) delivered, \(twice) delivered twice (in flight at the kill)")
        XCTAssertLessThanOrEqual(twice, 1000, "only what was in flight at the kill can go twice")
        try await assertEqual(try await client.length(keys.deadLetters), 0)
        second.signal(SIGTERM)
        _ = await second.waitForExit(timeout: 30)
        await fcm.stop()
    }

    /// docs/tools.md for FCM messages: a dead letter of an FCM message is replayed exactly (its `provider`
    /// kept), delivered once; and `status` counts it like any other.
    func testAnFCMDeadLetterIsReplayedAndDelivered() async throws {
        let redis = try RedisServer()
        defer { redis.kill() }
        let fcm = try await FCMStandIn()
        let client = RedisConnection(url: redis.url, name: "test-client")
        addTeardownBlock { await client.close() }
        let keys = RedisKeys()
        fcm.fcm.failNext(1, with: "INTERNAL")
        try await client.lpush(keys.queue, [fcmMessageJSON(id: "replay-me", tokens: [fcmToken("d", 7)])])
        let worker = try start(fcm, redis: redis, id: "fcm-replay", ["RETRY_MAX_ATTEMPTS": "1"])
        defer { worker.signal(SIGKILL) }
        try await eventually(timeout: .seconds(60)) { try await client.length(keys.deadLetters) == 1 }
        XCTAssertEqual(fcm.fcm.stats.deliveredCount(token: fcmToken("d", 7)), 0)

        let tool = try WorkerProcess(environment: ["REDIS_URL": redis.urlString], arguments: ["dlq", "replay", "--yes"],
                                     logFile: makeTemporaryDirectory("fcm-replay-tool") + "/tool.log")
        let status = await tool.waitForExit(timeout: 60)
        XCTAssertEqual(status, 0, tool.log)
        try await eventually(timeout: .seconds(60)) { fcm.fcm.stats.deliveredCount(token: fcmToken("d", 7)) == 1 }
        try await eventually(timeout: .seconds(30)) { try await self.drained(client, worker: "fcm-replay") }
        try await assertEqual(try await client.length(keys.deadLetters), 0)
        XCTAssertEqual(fcm.fcm.stats.lastRequest.map { String(decoding: $0.body, as: UTF8.self).contains("\"token\":\"\(fcmToken("d", 7))\"") }, true)
        worker.signal(SIGTERM)
        _ = await worker.waitForExit(timeout: 30)
        await fcm.stop()
    }
}
