@testable import FCMProvider
import Foundation
import PushCore
import PushEmulator
import QueueProtocol
import RedisClient
import TestSupport
import XCTest

/// Issue 41: China's Android vendors end to end: a real worker process, a real redis-server, and the emulator serving
/// APNs, FCM, Huawei (v1 with OAuth client credentials, v3 with PS256 JWTs) and Xiaomi over TLS (docs/vendors.md).
final class VendorDeliveryTests: XCTestCase {
    private func drained(_ client: RedisConnection, worker id: String) async throws -> Bool {
        let keys = RedisKeys()
        let queued = try await client.length(keys.queue)
        let bulk = try await client.length(keys.bulkQueue)
        let claimed = try await client.claimedCount(keys.processing(worker: id))
        return queued == 0 && bulk == 0 && claimed == 0
    }

    /// Group messages of 100 tokens each (merged into jobs of thousands), one token in 100 dead.
    private func vendorGroup(_ provider: String, topic: String, prefix: String, count: Int = 5000) -> (elements: [String], live: [String], dead: [String]) {
        var elements: [String] = []
        var live: [String] = []
        var dead: [String] = []
        for message in 0..<(count / 100) {
            var tokens: [String] = []
            for n in (message * 100)..<(message * 100 + 100) {
                if n % 100 == 37 {
                    tokens.append(vendorToken("unregistered\(prefix)", n))
                    dead.append(tokens.last!)
                } else {
                    tokens.append(vendorToken(prefix, n))
                    live.append(tokens.last!)
                }
            }
            elements.append(vendorMessageJSON(id: "\(prefix)-\(message)", provider: provider, topic: topic, tokens: tokens,
                                              kind: "group", body: "group hello"))
        }
        return (elements, live, dead)
    }

    func testAMixedRunAcrossEveryProviderDeliversEachLiveTokenOnceAndEachDeadOneToFeedback() async throws {
        let redis = try RedisServer()
        defer { redis.kill() }
        let vendors = try await ChinaVendorStandIn(everyVendor: true)
        let client = RedisConnection(url: redis.url, name: "test-client")
        addTeardownBlock { await client.close() }
        let keys = RedisKeys()
        var elements: [String] = []
        for n in 0..<200 {
            elements.append(messageJSON(id: "a\(n)", tokens: [token("a1", n)]))
            elements.append(fcmMessageJSON(id: "f\(n)", tokens: [fcmToken("d", n)]))
        }
        let android = vendorGroup("huawei", topic: ChinaVendorStandIn.topic, prefix: "hv1")
        let harmony = vendorGroup("huawei", topic: ChinaVendorStandIn.harmonyTopic, prefix: "hv3")
        let xiaomi = vendorGroup("xiaomi", topic: ChinaVendorStandIn.topic, prefix: "mi")
        let honor = vendorGroup("honor", topic: ChinaVendorStandIn.topic, prefix: "ho")
        let oppo = vendorGroup("oppo", topic: ChinaVendorStandIn.topic, prefix: "op")
        let vivo = vendorGroup("vivo", topic: ChinaVendorStandIn.topic, prefix: "vi")
        elements += android.elements + harmony.elements + xiaomi.elements + honor.elements + oppo.elements + vivo.elements
        // A private message of each vendor too: a job of its own, one request; and a bulk one of the last three.
        elements.append(vendorMessageJSON(id: "hv1-private", provider: "huawei", tokens: [vendorToken("hv1p", 1)]))
        elements.append(vendorMessageJSON(id: "mi-private", provider: "xiaomi", tokens: [vendorToken("mip", 1)]))
        for provider in ["honor", "oppo", "vivo"] {
            elements.append(vendorMessageJSON(id: "\(provider)-private", provider: provider, tokens: [vendorToken("\(provider)p", 1)]))
        }
        try await client.lpush(keys.bulkQueue, ["honor", "oppo", "vivo"].map { provider in
            vendorMessageJSON(id: "\(provider)-bulk", provider: provider, tokens: [vendorToken("\(provider)b", 1), vendorToken("\(provider)b", 2)])
        })
        try await client.lpush(keys.queue, elements)
        let port = freePort()
        let worker = try WorkerProcess(environment: vendors.workerEnvironment(redis: redis, [
            "WORKER_ID": "vendors", "METRICS_LISTEN": "127.0.0.1:\(port)",
        ]), logFile: makeTemporaryDirectory("vendors") + "/worker.log")
        defer { worker.signal(SIGKILL) }

        try await eventually(timeout: .seconds(120)) { try await self.drained(client, worker: "vendors") }
        let huawei = vendors.emulator.huawei.stats
        let mi = vendors.emulator.xiaomi.stats
        let huaweiDelivered = huawei.deliveredByToken
        let xiaomiDelivered = mi.deliveredByToken
        XCTAssertEqual((android.live + harmony.live + [vendorToken("hv1p", 1)]).filter { huaweiDelivered[$0] != 1 }, [],
                       "every live Huawei token (v1 and v3) delivered exactly once")
        XCTAssertEqual((xiaomi.live + [vendorToken("mip", 1)]).filter { xiaomiDelivered[$0] != 1 }, [],
                       "every live Xiaomi token delivered exactly once")
        XCTAssertEqual(huawei.duplicates, [:])
        XCTAssertEqual(mi.duplicates, [:])
        XCTAssertEqual(huaweiDelivered.count, android.live.count + harmony.live.count + 1, "nothing else delivered")
        XCTAssertEqual(xiaomiDelivered.count, xiaomi.live.count + 1)
        let apnsDelivered = Dictionary(grouping: vendors.stand.apns.answered().filter { $0.status == 200 }, by: \.token).mapValues(\.count)
        XCTAssertEqual((0..<200).filter { apnsDelivered[token("a1", $0)] != 1 }, [], "APNs alongside: each once")
        XCTAssertEqual((0..<200).filter { vendors.stand.fcm.stats.deliveredByToken[fcmToken("d", $0)] != 1 }, [], "FCM alongside: each once")

        // Batches: 5,000 tokens per app in requests of up to 1,000 (at most one token in 500 a request).
        XCTAssertLessThanOrEqual(huawei.requests, (android.elements.count + harmony.elements.count) * 100 / 500 + 1,
                                 "Huawei requests: \(huawei.requests)")
        XCTAssertLessThanOrEqual(mi.requests, xiaomi.elements.count * 100 / 500 + 1, "Xiaomi requests: \(mi.requests)")
        // The chat classification on every vendor delivery.
        XCTAssertEqual(huawei.delivered(classification: "IM"), huawei.delivered, "Huawei category IM on every message")
        XCTAssertEqual(mi.delivered(classification: ChinaVendorStandIn.xiaomiChannel), mi.delivered,
                       "Xiaomi's private channel on every message")
        // Honor, OPPO and vivo: each live token once, lists of up to 1,000, the chat class on chat and none on bulk.
        let more = [("honor", honor, vendors.emulator.honor.stats, "NORMAL"), ("oppo", oppo, vendors.emulator.oppo.stats, "IM"),
                    ("vivo", vivo, vendors.emulator.vivo.stats, "IM")]
        for (provider, group, stats, chatClass) in more {
            let delivered = stats.deliveredByToken
            let expected = group.live + [vendorToken("\(provider)p", 1), vendorToken("\(provider)b", 1), vendorToken("\(provider)b", 2)]
            XCTAssertEqual(expected.filter { delivered[$0] != 1 }, [], "every live \(provider) token delivered exactly once")
            XCTAssertEqual(delivered.count, expected.count, "\(provider): nothing else delivered")
            XCTAssertEqual(stats.duplicates, [:], provider)
            XCTAssertLessThanOrEqual(stats.requests, group.elements.count * 100 / 500 + 3, "\(provider) requests: \(stats.requests)")
            XCTAssertEqual(stats.delivered(classification: chatClass), group.live.count + 1, "\(provider): the chat class on chat")
        }

        let feedback = try await client.strings(keys.feedback).map { jsonObject(Array($0.utf8)) }
        let byToken = Dictionary(feedback.map { ($0["token"] as? String ?? "", $0) }) { first, _ in first }
        XCTAssertEqual(feedback.count, android.dead.count + harmony.dead.count + xiaomi.dead.count + honor.dead.count + oppo.dead.count
                       + vivo.dead.count, "one entry per dead token")
        for (provider, group) in [("honor", honor), ("oppo", oppo), ("vivo", vivo)] {
            for token in group.dead {
                XCTAssertEqual(byToken[token]?["provider"] as? String, provider)
                XCTAssertEqual(byToken[token]?["reason"] as? String, "Unregistered", "\(provider) names it dead")
            }
        }
        for token in android.dead {
            XCTAssertEqual(byToken[token]?["provider"] as? String, "huawei")
            XCTAssertEqual(byToken[token]?["reason"] as? String, "BadDeviceToken", "v1 names refused tokens illegal")
        }
        for token in harmony.dead {
            XCTAssertEqual(byToken[token]?["provider"] as? String, "huawei")
            XCTAssertEqual(byToken[token]?["reason"] as? String, "Unregistered", "v3 noRight")
        }
        for token in xiaomi.dead {
            XCTAssertEqual(byToken[token]?["provider"] as? String, "xiaomi")
            XCTAssertEqual(byToken[token]?["reason"] as? String, "Unregistered", "Xiaomi bad_regids")
        }
        let deadLetters = try await client.strings(keys.deadLetters)
        XCTAssertEqual(deadLetters, [], "nothing dead-lettered")

        let metrics = await httpGet("http://127.0.0.1:\(port)/metrics")?.body ?? ""
        XCTAssertEqual(prometheusSample(metrics, "push_notifications_total",
                                        ["provider": "xiaomi", "app": ChinaVendorStandIn.topic, "outcome": "delivered", "reason": ""]),
                       Double(xiaomi.live.count + 1))
        XCTAssertEqual(prometheusSample(metrics, "push_notifications_total",
                                        ["provider": "huawei", "app": ChinaVendorStandIn.harmonyTopic, "outcome": "delivered", "reason": ""]),
                       Double(harmony.live.count))
        XCTAssertGreaterThan(prometheusSample(metrics, "push_provider_request_duration_seconds_count", ["provider": "huawei"]) ?? 0, 0)
        XCTAssertEqual(prometheusSample(metrics, "push_provider_access_token_renewals_total", ["provider": "huawei", "app": ChinaVendorStandIn.topic, "result": "ok"]), 1, "one access token for the v1 app")
        printFigure("vendor mixed run: Huawei \(huawei.requests) requests for \(huawei.delivered) deliveries, Xiaomi \(mi.requests) for \(mi.delivered)")
        worker.signal(SIGTERM)
        let status = await worker.waitForExit(timeout: 30)
        XCTAssertEqual(status, 0, worker.log.suffix(3000).description)
        await vendors.stop()
    }

    /// A Xiaomi app's daily quota spent mid-run (10034): the rest of its messages wait (held by its lanes, and the
    /// ones claimed later parked in Redis, which `worker status` lists), while APNs and Huawei deliver everything;
    /// nothing is lost or dead-lettered, and after a graceful stop every waiting message is back in Redis.
    func testASpentXiaomiQuotaHoldsXiaomiAloneAndLosesNothing() async throws {
        let redis = try RedisServer()
        defer { redis.kill() }
        let vendors = try await ChinaVendorStandIn { $0.xiaomi.apps[0].dailyQuota = 1000 }
        let client = RedisConnection(url: redis.url, name: "test-client")
        addTeardownBlock { await client.close() }
        let keys = RedisKeys()
        let parkedKey = "push:parked:xiaomi:\(ChinaVendorStandIn.topic)"
        // 30 private Xiaomi messages of 100 tokens: a request each, the 11th and later refused for the day.
        try await client.lpush(keys.queue, (0..<30).map { m in
            vendorMessageJSON(id: "mi-\(m)", provider: "xiaomi", tokens: (0..<100).map { vendorToken("q", m * 100 + $0) }, body: "m\(m)")
        })
        let worker = try WorkerProcess(environment: vendors.workerEnvironment(redis: redis, [
            "WORKER_ID": "quota", "SHUTDOWN_TIMEOUT_S": "3",
        ]), logFile: makeTemporaryDirectory("vendors-quota") + "/worker.log")
        defer { worker.signal(SIGKILL) }
        let mi = vendors.emulator.xiaomi.stats
        try await eventually(timeout: .seconds(60)) { mi.count(code: "10034") > 0 }
        // Claimed once the lane waits for the quota: Xiaomi's messages are parked. The lane says it waits within a
        // turn of its answer, so a late message is pushed each poll until one is parked; the others go.
        let late = CountBox()
        try await eventually(timeout: .seconds(60)) {
            let m = late.next()
            try await client.lpush(keys.queue, [vendorMessageJSON(id: "mi-late-\(m)", provider: "xiaomi",
                                                                  tokens: [vendorToken("ql", m)], body: "late \(m)")])
            return try await client.length(parkedKey) > 0
        }
        try await client.lpush(keys.queue, (0..<500).map { messageJSON(id: "a\($0)", tokens: [token("a1", $0)]) })
        let huaweiTokens = (0..<2000).map { vendorToken("qh", $0) }
        try await client.lpush(keys.queue, (0..<20).map { m in
            vendorMessageJSON(id: "hw-\(m)", provider: "huawei", tokens: Array(huaweiTokens[(m * 100)..<(m * 100 + 100)]),
                              kind: "group", body: "group")
        })
        try await eventually(timeout: .seconds(60)) {
            vendors.emulator.huawei.stats.deliveredByToken.count == 2000
                && vendors.stand.apns.answeredCount(status: 200) >= 500
        }
        XCTAssertEqual(mi.delivered, 1000, "the day's quota and no more")
        XCTAssertEqual(mi.duplicates, [:])
        XCTAssertEqual(vendors.emulator.huawei.stats.duplicates, [:])
        try await assertEqual(try await client.length(keys.deadLetters), 0)
        try await assertEqual(try await client.length(keys.feedback), 0)
        let status = try WorkerProcess(environment: ["REDIS_URL": redis.urlString], arguments: ["status"],
                                       logFile: makeTemporaryDirectory("vendors-quota-status") + "/status.log")
        _ = await status.waitForExit(timeout: 60)
        XCTAssertTrue(status.log.contains(parkedKey), "worker status lists the waiting app: \(status.log.suffix(2000))")
        worker.signal(SIGTERM)
        _ = await worker.waitForExit(timeout: 40)
        // Every Xiaomi message not delivered is back in Redis: the queue or its parked list.
        let waiting = try await client.length(keys.queue) + (try await client.length(parkedKey))
        XCTAssertEqual(waiting, 20 + late.count, "20 messages past the quota and the \(late.count) pushed after it")
        await vendors.stop()
    }

    /// Xiaomi's quota spent by bulk messages holds bulk alone: chat of the same app (on its private channel, under no
    /// quota) is delivered at once; the bulk messages claimed meanwhile wait in Redis, parked by class, counted in
    /// `push_parked` and shown by `worker status --json` with the reason and until when; once Xiaomi's day has rolled
    /// over, a worker that starts afresh (a restart standing in for the hours to midnight) sends them, each once.
    func testASpentBulkQuotaHoldsOnlyBulkWhileChatGoesOn() async throws {
        let redis = try RedisServer()
        defer { redis.kill() }
        let vendors = try await ChinaVendorStandIn {
            $0.xiaomi.apps[0].dailyQuota = 500
            $0.xiaomi.apps[0].channels = [ChinaVendorStandIn.xiaomiChannel, "mkt-1"]
            $0.xiaomi.apps[0].privateChannels = [ChinaVendorStandIn.xiaomiChannel]
        }
        let client = RedisConnection(url: redis.url, name: "test-client")
        addTeardownBlock { await client.close() }
        let keys = RedisKeys()
        let bulkParked = "push:parked:xiaomi:\(ChinaVendorStandIn.topic):bulk"
        // 20 broadcasts of 100 regIds: the first 5 spend the day's quota of 500.
        let bulkTokens = (0..<2000).map { vendorToken("bk", $0) }
        try await client.lpush(keys.bulkQueue, (0..<20).map { m in
            vendorMessageJSON(id: "bulk-\(m)", provider: "xiaomi", tokens: Array(bulkTokens[(m * 100)..<(m * 100 + 100)]),
                              kind: "group", body: "news \(m)")
        })
        let port = freePort()
        let environment = vendors.workerEnvironment(redis: redis, [
            "WORKER_ID": "bulk-quota", "SHUTDOWN_TIMEOUT_S": "3", "METRICS_LISTEN": "127.0.0.1:\(port)",
            "XIAOMI_APPS_0_BULK_CHANNEL_ID": "mkt-1",
        ])
        let worker = try WorkerProcess(environment: environment, logFile: makeTemporaryDirectory("bulk-quota") + "/worker.log")
        defer { worker.signal(SIGKILL) }
        let mi = vendors.emulator.xiaomi.stats
        try await eventually(timeout: .seconds(60)) { mi.count(code: "10034") > 0 }
        // Broadcasts claimed once the bulk class is held are parked by class; one is pushed each poll until one is.
        var lateBulk: [String] = []
        try await eventually(timeout: .seconds(60)) {
            let token = vendorToken("bl", lateBulk.count)
            lateBulk.append(token)
            try await client.lpush(keys.bulkQueue, [vendorMessageJSON(id: "bulk-late-\(lateBulk.count)", provider: "xiaomi",
                                                                      tokens: [token], body: "late news")])
            return try await client.length(bulkParked) > 0
        }
        // Chat of the same app goes on its private channel, at once.
        let chatTokens = (0..<50).map { vendorToken("ct", $0) }
        let enqueued = ContinuousClock.now
        try await client.lpush(keys.queue, chatTokens.enumerated().map { n, token in
            vendorMessageJSON(id: "chat-\(n)", provider: "xiaomi", tokens: [token], body: "hi \(n)")
        })
        try await eventually(timeout: .seconds(60)) { chatTokens.allSatisfy { mi.deliveredCount(token: $0) == 1 } }
        let took = ContinuousClock.now - enqueued
        printFigure("bulk quota: 50 Xiaomi chat messages delivered \(took) after their enqueue while the app's bulk quota was spent")
        XCTAssertLessThan(took, .seconds(30), "chat never waits for the bulk quota (it would have waited until midnight)")
        XCTAssertEqual(mi.delivered(classification: ChinaVendorStandIn.xiaomiChannel), 50, "chat on the private channel")
        XCTAssertEqual(mi.delivered(classification: "mkt-1"), 500, "bulk on its own channel, the quota and no more")

        // Held work in plain sight: the gauge, and the status with its reason and until when.
        // The gauge is sampled every second.
        try await eventually(timeout: .seconds(30)) {
            let metrics = await httpGet("http://127.0.0.1:\(port)/metrics")?.body ?? ""
            return prometheusSample(metrics, "push_parked", ["provider": "xiaomi", "app": ChinaVendorStandIn.topic,
                                                             "class": "bulk", "reason": "quota: 10034"]) ?? 0 > 0
        }
        let status = try WorkerProcess(environment: ["REDIS_URL": redis.urlString], arguments: ["status", "--json"],
                                       logFile: makeTemporaryDirectory("bulk-quota-status") + "/status.log")
        _ = await status.waitForExit(timeout: 60)
        let document = try JSONSerialization.jsonObject(with: Data(status.log.utf8)) as? [[String: Any]]
        let held = (document?.first?["held"] as? [[String: Any]]) ?? []
        let bulk = try XCTUnwrap(held.first { $0["class"] as? String == "bulk" }, status.log)
        XCTAssertEqual(bulk["provider"] as? String, "xiaomi")
        XCTAssertEqual(bulk["app"] as? String, ChinaVendorStandIn.topic)
        XCTAssertEqual(bulk["reason"] as? String, "quota: 10034")
        XCTAssertGreaterThan((bulk["until_ms"] as? Int) ?? 0, Int(WallClock.nowMillis()), "held until Xiaomi's day rolls over")
        XCTAssertGreaterThan((bulk["messages"] as? Int) ?? 0, 0)
        XCTAssertNil(held.first { $0["class"] as? String == "chat" }, "chat is not held")
        try await assertEqual(try await client.length(keys.deadLetters), 0)

        // Xiaomi's day rolls over; a fresh worker sends every waiting broadcast, each once.
        worker.signal(SIGTERM)
        _ = await worker.waitForExit(timeout: 40)
        vendors.emulator.xiaomi.startNextDay()
        vendors.emulator.xiaomi.setDailyQuota(appSecret: vendors.xiaomiSecret, nil)
        let next = try WorkerProcess(environment: environment, logFile: makeTemporaryDirectory("bulk-quota-2") + "/worker.log")
        defer { next.signal(SIGKILL) }
        let everyBulk = bulkTokens + lateBulk
        try await eventually(timeout: .seconds(90)) { everyBulk.allSatisfy { mi.deliveredCount(token: $0) == 1 } }
        XCTAssertEqual(mi.duplicates, [:], "nothing sent twice")
        try await assertEqual(try await client.length(bulkParked), 0)
        try await assertEqual(try await client.length(keys.deadLetters), 0)
        next.signal(SIGTERM)
        _ = await next.waitForExit(timeout: 40)
        await vendors.stop()
    }

    /// A busy service is not a stalled one: Huawei answering every request only after 1.2 s (a server at its
    /// capacity), with requests waiting for its streams. Nothing of the app is parked (it was: answers slower than a
    /// tenth of the request timeout while requests waited for a stream parked the app, and parked and unparked it in
    /// cycles), and every token is delivered; one delivered twice only if its request may have reached Huawei
    /// unanswered in time (a loaded machine can stretch an answer past the 10 s timeout), which the worker counts.
    func testABusyServiceKeepsItsWorkAndIsNeverParked() async throws {
        let redis = try RedisServer()
        defer { redis.kill() }
        let vendors = try await ChinaVendorStandIn {
            $0.huawei.faults.latencyMillis = 1200
            $0.vendorMaxConcurrentStreams = 4
        }
        let client = RedisConnection(url: redis.url, name: "test-client")
        addTeardownBlock { await client.close() }
        let total = 30_000
        try await client.lpush(RedisKeys().queue, (0..<(total / 1000)).map { message in
            vendorMessageJSON(id: "busy-\(message)", provider: "huawei",
                              tokens: (message * 1000..<(message * 1000 + 1000)).map { vendorToken("bz", $0) }, kind: "group", body: "busy")
        })
        let port = freePort()
        // Two connections of 4 streams: 8 requests of 1,000 on the wire, 6 more ready behind them (14 in the room).
        let worker = try WorkerProcess(environment: vendors.workerEnvironment(redis: redis, [
            "WORKER_ID": "busy", "HUAWEI_APPS_0_TOKENS_PER_S": "10000000", "COLLECTOR_MAX_IN_FLIGHT": "14000",
            "HUAWEI_CONNECTIONS": "2", "HUAWEI_MAX_CONNECTIONS": "2", "METRICS_LISTEN": "127.0.0.1:\(port)", "SHUTDOWN_TIMEOUT_S": "3",
        ]), logFile: makeTemporaryDirectory("vendors-busy") + "/worker.log")
        defer { worker.signal(SIGKILL) }
        let stats = vendors.emulator.huawei.stats
        let started = ContinuousClock.now
        try await eventually(timeout: .seconds(180)) { stats.deliveredByToken.count >= total }
        let twice = stats.duplicates.values.reduce(0) { $0 + $1 - 1 }
        printFigure("busy Huawei (1.2 s answers, 8 streams): \(total) tokens in \(ContinuousClock.now - started), \(twice) sent again")
        XCTAssertEqual(stats.deliveredByToken.count, total)
        let metrics = await httpGet("http://127.0.0.1:\(port)/metrics")?.body ?? ""
        let possiblyDuplicated = prometheusSample(metrics, "push_notifications_possibly_duplicated_total",
                                                  ["provider": "huawei", "app": ChinaVendorStandIn.topic]) ?? 0
        // libcurl's own re-sends (a refused stream, a GOAWAY) are the other ambiguous kind, counted per request.
        let resentByLibcurl = (prometheusSample(metrics, "push_provider_retries_total", ["provider": "huawei", "reason": "ResentByLibcurl"]) ?? 0) * 1000
        XCTAssertLessThanOrEqual(Double(twice), possiblyDuplicated + resentByLibcurl, "sent again beyond what was on the wire unanswered")
        XCTAssertEqual(prometheusSample(metrics, "push_messages_parked_total", ["provider": "huawei", "app": ChinaVendorStandIn.topic]) ?? 0, 0,
                       "a service that answers is never parked")
        XCTAssertFalse(worker.log.contains("parked messages go back"), worker.log.suffix(2000).description)
        worker.signal(SIGTERM)
        _ = await worker.waitForExit(timeout: 30)
        await vendors.stop()
    }

    /// One request whose every token Huawei refuses, first in the queue of a freshly started worker with one lane, then
    /// the app's other messages through Redis: they are all delivered at once (nothing pauses the app: the pause on a
    /// quiet app's all-refused request once held it for good, probing with the same dead request). The dead tokens are
    /// sent once and kept as one replayable `AllTokensRefused` dead letter, not feedback; `dlq replay` sends them
    /// again, and as the app now delivers they go to feedback. After a restart, with the fleet's last delivery read
    /// from Redis, the same again is feedback at once, and again holds nothing.
    func testEveryTokenRefusedOnAFreshWorkerHoldsNothingAndIsReplayable() async throws {
        let redis = try RedisServer()
        defer { redis.kill() }
        let vendors = try await ChinaVendorStandIn()
        let client = RedisConnection(url: redis.url, name: "test-client")
        addTeardownBlock { await client.close() }
        let keys = RedisKeys()
        let huawei = vendors.emulator.huawei.stats
        let dead = (0..<5).map { vendorToken("unregistered", $0) }
        let live = (0..<20).map { vendorToken("lv", $0) }
        try await client.lpush(keys.queue, [vendorMessageJSON(id: "all-dead", provider: "huawei", tokens: dead)])
        // One lane for the app.
        let environment = vendors.workerEnvironment(redis: redis, ["WORKER_ID": "refused", "SHUTDOWN_TIMEOUT_S": "3",
                                                                   "HUAWEI_CONNECTIONS": "1", "HUAWEI_MAX_CONNECTIONS": "1"])
        let worker = try WorkerProcess(environment: environment, logFile: makeTemporaryDirectory("all-refused") + "/worker.log")
        defer { worker.signal(SIGKILL) }
        // The refused request answered first (the app's other messages, sent beside it on h2, could be answered
        // before it, and a delivery just before makes its dead tokens believable: feedback). Then the app's other
        // messages through Redis, which the old pause parked behind the same dead request for good.
        try await eventually(timeout: .seconds(30)) { try await client.length(keys.deadLetters) == 1 }
        try await client.lpush(keys.queue, live.enumerated().map { n, token in
            vendorMessageJSON(id: "live-\(n)", provider: "huawei", tokens: [token], body: "hi \(n)")
        })
        let started = ContinuousClock.now
        try await eventually(timeout: .seconds(60)) { live.allSatisfy { huawei.deliveredCount(token: $0) == 1 } }
        printFigure("all refused: the app's 20 other messages delivered \(ContinuousClock.now - started) after their enqueue")
        let reply = try await client.execute(["LINDEX", keys.deadLetters, "0"])
        let letter = try XCTUnwrap(reply.bytes)
        let entry = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(letter)) as? [String: Any])
        XCTAssertEqual(entry["reason"] as? String, "AllTokensRefused")
        XCTAssertEqual(((entry["message"] as? [String: Any])?["tokens"] as? [String]) ?? [], dead, "every token of it: \(entry)")
        XCTAssertNil(entry["failed_tokens"], "all of them")
        XCTAssertEqual(huawei.refusedTokens, dead.count, "each dead token sent once")
        try await assertEqual(try await client.length(keys.feedback), 0)

        // Replayed: the app delivers now, so Huawei's answer is believed: feedback, each token once.
        let replay = try WorkerProcess(environment: ["REDIS_URL": redis.urlString], arguments: ["dlq", "replay", "--yes"],
                                       logFile: makeTemporaryDirectory("all-refused-replay") + "/tool.log")
        let replayed = await replay.waitForExit(timeout: 60)
        XCTAssertEqual(replayed, 0, replay.log)
        try await eventually(timeout: .seconds(60)) { try await client.length(keys.feedback) == dead.count }
        XCTAssertEqual(huawei.refusedTokens, 2 * dead.count)
        try await assertEqual(try await client.length(keys.deadLetters), 0)

        // A restart: the new worker reads the fleet's last delivery from Redis (written within seconds of a delivery);
        // the same request holds nothing again, and is believed.
        try await eventually(timeout: .seconds(30)) {
            try await client.execute(["HGET", keys.lastDeliveries, "huawei:\(ChinaVendorStandIn.topic)"]).string != nil
        }
        worker.signal(SIGTERM)
        _ = await worker.waitForExit(timeout: 40)
        let again = (5..<10).map { vendorToken("unregistered", $0) }
        let liveAgain = (20..<40).map { vendorToken("lv", $0) }
        try await client.lpush(keys.queue, [vendorMessageJSON(id: "all-dead-2", provider: "huawei", tokens: again)])
        try await client.lpush(keys.queue, liveAgain.enumerated().map { n, token in
            vendorMessageJSON(id: "live-again-\(n)", provider: "huawei", tokens: [token], body: "hi again \(n)")
        })
        let restarted = try WorkerProcess(environment: environment, logFile: makeTemporaryDirectory("all-refused-2") + "/worker.log")
        defer { restarted.signal(SIGKILL) }
        try await eventually(timeout: .seconds(60)) { liveAgain.allSatisfy { huawei.deliveredCount(token: $0) == 1 } }
        try await eventually(timeout: .seconds(30)) { try await client.length(keys.feedback) == dead.count + again.count }
        XCTAssertEqual(huawei.refusedTokens, 3 * dead.count, "each sent once")
        try await assertEqual(try await client.length(keys.deadLetters), 0)
        XCTAssertEqual(huawei.duplicates, [:])
        restarted.signal(SIGTERM)
        _ = await restarted.waitForExit(timeout: 40)
        await vendors.stop()
    }

    /// A worker whose only apps are China vendors' (no `apns.apps`, no `fcm.apps`) starts and delivers: it refused to
    /// start, saying that apns.apps and fcm.apps were both empty, as if no other provider could have apps.
    func testAWorkerWithVendorAppsOnlyStartsAndDelivers() async throws {
        let redis = try RedisServer()
        defer { redis.kill() }
        let vendors = try await ChinaVendorStandIn()
        let client = RedisConnection(url: redis.url, name: "test-client")
        addTeardownBlock { await client.close() }
        let port = freePort()
        let environment = vendors.workerEnvironment(redis: redis, ["WORKER_ID": "vendors-only", "METRICS_LISTEN": "127.0.0.1:\(port)"])
            .filter { !$0.key.hasPrefix("APNS_APPS_") && !$0.key.hasPrefix("FCM_APPS_") }
        XCTAssertFalse(environment.keys.contains { $0.hasPrefix("APNS_APPS_") || $0.hasPrefix("FCM_APPS_") })
        let tokens = (0..<10).map { vendorToken("vo", $0) }
        try await client.lpush(RedisKeys().queue, [
            vendorMessageJSON(id: "vo-xiaomi", provider: "xiaomi", tokens: tokens),
            vendorMessageJSON(id: "vo-huawei", provider: "huawei", tokens: tokens),
        ])
        let worker = try WorkerProcess(environment: environment, logFile: makeTemporaryDirectory("vendors-only") + "/worker.log")
        defer { worker.signal(SIGKILL) }
        try await eventually(timeout: .seconds(60)) {
            vendors.emulator.xiaomi.stats.delivered >= 10 && vendors.emulator.huawei.stats.deliveredByToken.count >= 10
        }
        XCTAssertEqual(vendors.emulator.xiaomi.stats.duplicates, [:])
        XCTAssertEqual(vendors.emulator.huawei.stats.duplicates, [:])
        // The connections libcurl opened for Xiaomi are counted as Xiaomi's (they were counted as APNs's).
        let metrics = await httpGet("http://127.0.0.1:\(port)/metrics")?.body ?? ""
        XCTAssertGreaterThanOrEqual(prometheusSample(metrics, "push_provider_connections_opened_total", ["provider": "xiaomi", "app": ChinaVendorStandIn.topic]) ?? 0, 1,
                                    metrics)
        XCTAssertNil(prometheusSample(metrics, "push_provider_connections_opened_total", ["provider": "apns", "app": ChinaVendorStandIn.topic]),
                     "no APNs app here, so no APNs connection")
        worker.signal(SIGTERM)
        let status = await worker.waitForExit(timeout: 30)
        XCTAssertEqual(status, 0, worker.log.suffix(2000).description)
        await vendors.stop()
    }

    /// How fast Huawei v1 goes at 0 ms: 200,000 tokens in group messages of 1,000 (merged into batches of 1,000),
    /// the app's rate raised out of the way. Prints tokens a second between 10% and 90% delivered; asserts only
    /// that each token arrived once (a figure, not a timed test: the emulator shares the machine).
    func testHuaweiV1ThroughputFigure() async throws {
        let redis = try RedisServer()
        defer { redis.kill() }
        let vendors = try await ChinaVendorStandIn()
        let client = RedisConnection(url: redis.url, name: "test-client")
        addTeardownBlock { await client.close() }
        let total = 200_000
        var elements: [String] = []
        for message in 0..<(total / 1000) {
            let tokens = (message * 1000..<(message * 1000 + 1000)).map { vendorToken("tp", $0) }
            elements.append(vendorMessageJSON(id: "tp-\(message)", provider: "huawei", tokens: tokens, kind: "group",
                                              body: "throughput"))
        }
        try await client.lpush(RedisKeys().queue, elements)
        let worker = try WorkerProcess(environment: vendors.workerEnvironment(redis: redis, [
            "WORKER_ID": "throughput", "HUAWEI_APPS_0_TOKENS_PER_S": "10000000", "COLLECTOR_MAX_IN_FLIGHT": "100000",
        ]), logFile: makeTemporaryDirectory("vendors-throughput") + "/worker.log")
        defer { worker.signal(SIGKILL) }
        let stats = vendors.emulator.huawei.stats
        let box = InstantsBox()
        try await eventually(timeout: .seconds(300)) {
            let delivered = stats.delivered
            if box.count == 0 && delivered >= total / 10 { box.append(.now) }
            if box.count == 1 && delivered >= total * 9 / 10 { box.append(.now) }
            return delivered >= total
        }
        let marks = box.all
        XCTAssertEqual(stats.duplicates, [:])
        XCTAssertEqual(stats.deliveredByToken.count, total)
        if marks.count == 2 {
            let seconds = Double((marks[1] - marks[0]).components.attoseconds) / 1e18 + Double((marks[1] - marks[0]).components.seconds)
            printFigure("Huawei v1 at 0 ms against the emulator (same machine): \(Int(Double(total) * 0.8 / max(seconds, 0.001))) tokens/s in \(stats.requests) requests")
        }
        worker.signal(SIGTERM)
        _ = await worker.waitForExit(timeout: 30)
        await vendors.stop()
    }
}

/// Times noted from the polling closure (which may run on any thread).
private final class InstantsBox: @unchecked Sendable {
    private let lock = NSLock()
    private var instants: [ContinuousClock.Instant] = []
    var count: Int { lock.withLock { instants.count } }
    var all: [ContinuousClock.Instant] { lock.withLock { instants } }
    func append(_ instant: ContinuousClock.Instant) { lock.withLock { instants.append(instant) } }
}

/// A counter the polling closure moves (it may run on any thread).
private final class CountBox: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    var count: Int { lock.withLock { value } }
    /// The current count, then one more.
    func next() -> Int {
        lock.withLock {
            defer { value += 1 }
            return value
        }
    }
}
