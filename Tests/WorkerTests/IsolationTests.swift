import APNsProvider
@testable import FCMProvider
import Foundation
import PushCore
import QueueProtocol
import RedisClient
import TestSupport
import XCTest

/// One app's or one provider's trouble never stalls the others (docs/architecture.md, "Isolation"): work an app
/// cannot send takes no room from claims, and what it claims meanwhile is parked in Redis and comes back when it
/// can send. Each test puts the troubled app's backlog first, so that without isolation it would fill
/// `collector.max_in_flight` and stop every claim; each prints how long the healthy app's messages took.
final class IsolationTests: XCTestCase {
    private func drained(_ client: RedisConnection, worker id: String) async throws -> Bool {
        let keys = RedisKeys()
        let queued = try await client.length(keys.queue)
        let claimed = try await client.claimedCount(keys.processing(worker: id))
        return queued == 0 && claimed == 0
    }

    private func parked(_ client: RedisConnection, _ provider: PushProvider, _ topic: String) async throws -> Int {
        try await client.length(RedisKeys().parked(provider: provider, topic: topic, lane: .chat))
    }

    /// The FCM scenarios' backlog: 30 messages of 100 tokens, in a pipeline whose room (`collector.max_in_flight`)
    /// is 2,000 tokens, so that without isolation the troubled backlog would fill it. (A tenth of the size they
    /// first had: the emulator runs in the test process, unoptimized, where its HTTP/2 streams cost about 2 ms of
    /// CPU each; 30,000 requests took over a minute alone and over two with other suites beside them.)
    private static let fcmMessages = 30
    private static let fcmTokens = fcmMessages * 100
    private static let room = "2000"

    /// The FCM scenarios: 3,000 FCM tokens (30 messages) claimed first while `trouble` keeps FCM from sending,
    /// then 1,000 APNs messages, which must be delivered while it lasts (the time is printed); then `recover`,
    /// after which every FCM token is delivered exactly once and nothing is dead-lettered.
    private func fcmBacklogScenario(_ name: String, tokenPrefix: String, _ fcm: FCMStandIn, environment extra: [String: String] = [:],
                                    whileTroubled check: (FCMStandIn) -> Void = { _ in }, recover: () async throws -> Void) async throws {
        let redis = try RedisServer()
        defer { redis.kill() }
        let client = RedisConnection(url: redis.url, name: "test-client")
        addTeardownBlock { await client.close() }
        let keys = RedisKeys()
        try await client.lpush(keys.queue, (0..<Self.fcmMessages).map { m in
            fcmMessageJSON(id: "\(tokenPrefix)\(m)", tokens: (0..<100).map { fcmToken(tokenPrefix, m * 100 + $0) })
        })
        let port = freePort()
        let id = "iso-\(tokenPrefix)"
        let worker = try WorkerProcess(environment: fcm.workerEnvironment(redis: redis, [
            "WORKER_ID": id, "METRICS_LISTEN": "127.0.0.1:\(port)", "COLLECTOR_MAX_IN_FLIGHT": Self.room,
        ].merging(extra) { $1 }), logFile: makeTemporaryDirectory(id) + "/worker.log")
        defer { worker.signal(SIGKILL) }
        // The pipeline fills with FCM work that cannot go, then its further messages are parked.
        try await eventually(timeout: .seconds(60)) { try await self.parked(client, .fcm, FCMStandIn.topic) > 0 }
        let enqueued = ContinuousClock.now
        try await client.lpush(keys.queue, (0..<1000).map { messageJSON(id: "a\($0)", tokens: [token("a1", $0)]) })
        try await eventually(timeout: .seconds(60)) { fcm.apns.answeredCount(status: 200) == 1000 }
        printFigure("isolation: 1,000 APNs messages behind \(Self.fcmTokens) FCM tokens (\(name)) delivered \(ContinuousClock.now - enqueued) after their enqueue, with \(fcm.fcm.stats.distinctTokensDelivered) FCM tokens delivered by then")
        check(fcm)
        let metrics = await httpGet("http://127.0.0.1:\(port)/metrics")?.body ?? ""
        XCTAssertGreaterThan(prometheusSample(metrics, "push_messages_parked_total", ["provider": "fcm", "app": FCMStandIn.topic]) ?? 0, 0)

        try await recover()
        try await eventually(timeout: .seconds(120)) {
            let parkedNow = try await self.parked(client, .fcm, FCMStandIn.topic)
            return try await self.drained(client, worker: id) && parkedNow == 0 && fcm.fcm.stats.distinctTokensDelivered == Self.fcmTokens
        }
        let delivered = fcm.fcm.stats.deliveredByToken
        XCTAssertEqual((0..<Self.fcmTokens).filter { delivered[fcmToken(tokenPrefix, $0)] != 1 }.count, 0, "every FCM token delivered exactly once")
        XCTAssertEqual(fcm.fcm.stats.duplicates, [:])
        try await assertEqual(try await client.length(keys.deadLetters), 0)
        worker.signal(SIGTERM)
        _ = await worker.waitForExit(timeout: 30)
    }

    /// FCM's token endpoint down: no access token, so nothing of FCM can go.
    func testATokenEndpointDownHoldsNoAPNsMessage() async throws {
        let fcm = try await FCMStandIn()
        fcm.fcm.setTokenEndpointDown(true)
        try await fcmBacklogScenario("token endpoint down", tokenPrefix: "d", fcm, whileTroubled: {
            XCTAssertEqual($0.fcm.stats.requests, 0, "still no access token")
        }, recover: { fcm.fcm.setTokenEndpointDown(false) })
        await fcm.stop()
    }

    /// FCM's endpoint unreachable: every connection refused, until the emulator's FCM listener opens again on the
    /// same port (one no outgoing connection takes meanwhile).
    func testAnUnreachableEndpointHoldsNoOtherProvider() async throws {
        let fcm = try await FCMStandIn { $0.fcmPort = freeReservedPort() }
        await fcm.emulator.closeFCMListener()
        try await fcmBacklogScenario("unreachable endpoint", tokenPrefix: "u", fcm, environment: ["RETRY_MAX_DELAY_MS": "2000"],
                                     whileTroubled: {
            XCTAssertEqual($0.fcm.stats.requests, 0, "FCM still unreachable")
        }, recover: { try await fcm.emulator.reopenFCMListener() })
        await fcm.stop()
    }

    /// FCM answering only after 3 s (a tenth of the request timeout is 1 s), until it is fast again. One
    /// connection of 10 streams: while slow, FCM takes about 3 tokens a second, so its backlog still waits
    /// when the APNs messages are through, however slowly a loaded machine runs the test (with 100 streams
    /// and more connections it finished its 3,000 tokens in about as long as APNs took, and under load first).
    func testASlowEndpointHoldsNoOtherProvider() async throws {
        let fcm = try await FCMStandIn {
            $0.fcmFaults.latencyMillis = 3000
            $0.fcmMaxConcurrentStreams = 10
        }
        try await fcmBacklogScenario("slow endpoint", tokenPrefix: "s", fcm, environment: ["FCM_CONNECTIONS": "1", "FCM_MAX_CONNECTIONS": "1"],
                                     whileTroubled: {
            XCTAssertLessThan($0.fcm.stats.distinctTokensDelivered, Self.fcmTokens, "FCM was still slow")
        }, recover: { fcm.fcm.updateFaults { $0.latencyMillis = 0 } })
        await fcm.stop()
    }

    /// One APNs app whose key Apple refuses, with 30,000 of its tokens first: another app's messages behind them
    /// are delivered; the refused app's messages stay (claimed or parked), none dead-lettered.
    func testARefusedAppHoldsNoOtherApp() async throws {
        let redis = try RedisServer()
        defer { redis.kill() }
        let apns = try await EmulatorStandIn()
        let client = RedisConnection(url: redis.url, name: "test-client")
        addTeardownBlock { await client.close() }
        let keys = RedisKeys()
        // A second app signs with a key the emulator does not know: InvalidProviderToken, the app pauses.
        let unknownKey = try generateP8Key(in: makeTemporaryDirectory("refused-key"))
        let refused = "com.example.refused"
        try await client.lpush(keys.queue, (0..<300).map { m in
            messageJSON(id: "r\(m)", tokens: (0..<100).map { token("b\(m % 10)", m * 100 + $0) }, topic: refused)
        })
        let worker = try WorkerProcess(environment: apns.workerEnvironment(redis: redis, [
            "WORKER_ID": "iso-apns", "COLLECTOR_MAX_IN_FLIGHT": "20000", "SHUTDOWN_TIMEOUT_S": "3",
            "APNS_APPS_1_TOPIC": refused, "APNS_APPS_1_TEAM_ID": EmulatorStandIn.teamID, "APNS_APPS_1_KEY_ID": "ZZZ999ZZZ9",
            "APNS_APPS_1_KEY_FILE": unknownKey,
        ]), logFile: makeTemporaryDirectory("iso-apns") + "/worker.log")
        defer { worker.signal(SIGKILL) }
        try await eventually(timeout: .seconds(60)) { try await self.parked(client, .apns, refused) > 0 }
        let enqueued = ContinuousClock.now
        try await client.lpush(keys.queue, (0..<1000).map { messageJSON(id: "a\($0)", tokens: [token("a1", $0)]) })
        let wanted = Set((0..<1000).map { token("a1", $0) })
        var accepted = Set<String>(), read = 0
        try await eventually(timeout: .seconds(60)) {
            let fresh = apns.answered(from: read)
            read += fresh.count
            for answer in fresh where answer.status == 200 { accepted.insert(answer.token) }
            return accepted.isSuperset(of: wanted)
        }
        printFigure("isolation: 1,000 messages of a healthy app behind 30,000 tokens of a refused one delivered \(ContinuousClock.now - enqueued) after their enqueue")
        try await assertEqual(try await client.length(keys.deadLetters), 0)
        // Nothing of the refused app is lost: every message is still claimed or parked.
        let held = try await client.execute(["HVALS", keys.processing(worker: "iso-apns")]).array?.compactMap(\.string) ?? []
        let claimed = held.filter { $0.contains(refused) }.count
        let parkedNow = try await parked(client, .apns, refused)
        let queued = try await client.length(keys.queue)
        XCTAssertEqual(claimed + parkedNow + queued, 300, "claimed \(claimed), parked \(parkedNow), queued \(queued)")
        worker.signal(SIGTERM)
        _ = await worker.waitForExit(timeout: 40)
        // After a graceful stop the refused app's messages are all back in Redis: queue or parked list.
        let afterStop = try await client.length(keys.queue) + (try await parked(client, .apns, refused))
        XCTAssertEqual(afterStop, 300)
        await apns.stop()
    }

    /// An FCM project held by a 429 (Retry-After an hour): APNs and the project's messages behind the hold are
    /// no longer held with it; the held project's messages wait in Redis, none lost or dead-lettered.
    func testAProjectOnHoldHoldsNothingElse() async throws {
        let redis = try RedisServer()
        defer { redis.kill() }
        let fcm = try await FCMStandIn { $0.fcmFaults.retryAfterSeconds = 3600 }
        let client = RedisConnection(url: redis.url, name: "test-client")
        addTeardownBlock { await client.close() }
        let keys = RedisKeys()
        fcm.fcm.failNext(1, with: "QUOTA_EXCEEDED")
        try await client.lpush(keys.queue, (0..<300).map { m in fcmMessageJSON(id: "f\(m)", tokens: (0..<100).map { fcmToken("h", m * 100 + $0) }) })
        let worker = try WorkerProcess(environment: fcm.workerEnvironment(redis: redis, [
            "WORKER_ID": "iso-hold", "COLLECTOR_MAX_IN_FLIGHT": "20000", "SHUTDOWN_TIMEOUT_S": "3",
        ]), logFile: makeTemporaryDirectory("iso-hold") + "/worker.log")
        defer { worker.signal(SIGKILL) }
        try await eventually(timeout: .seconds(60)) { try await self.parked(client, .fcm, FCMStandIn.topic) > 0 }
        let enqueued = ContinuousClock.now
        try await client.lpush(keys.queue, (0..<1000).map { messageJSON(id: "a\($0)", tokens: [token("a1", $0)]) })
        try await eventually(timeout: .seconds(60)) { fcm.apns.answeredCount(status: 200) == 1000 }
        printFigure("isolation: 1,000 APNs messages behind an FCM project on hold delivered \(ContinuousClock.now - enqueued) after their enqueue")
        XCTAssertTrue(worker.log.contains("asks this project to slow down"), "the project is held")
        try await assertEqual(try await client.length(keys.deadLetters), 0)
        worker.signal(SIGTERM)
        _ = await worker.waitForExit(timeout: 40)
        // Every FCM message is either delivered in full (those before the hold) or back in Redis.
        let back = try await client.length(keys.queue) + (try await parked(client, .fcm, FCMStandIn.topic))
        let delivered = fcm.fcm.stats.deliveredByToken
        let deliveredMessages = (0..<300).filter { m in (0..<100).allSatisfy { delivered[fcmToken("h", m * 100 + $0)] == 1 } }.count
        XCTAssertEqual(back + deliveredMessages, 300, "back \(back), delivered \(deliveredMessages)")
        XCTAssertEqual(fcm.fcm.stats.duplicates, [:])
        await fcm.stop()
    }
}
