import Foundation
import PushCore
import QueueProtocol
import RedisClient
import TestSupport
import XCTest

/// `/metrics`, `/healthz` and `/readyz` of a running worker, scraped over HTTP like Prometheus and a
/// Kubernetes probe would, while messages flow through a real redis-server and the APNs emulator.
final class MetricsEndpointTests: XCTestCase {
    var redis: RedisServer!
    var apns: EmulatorStandIn!
    var client: RedisConnection!
    var directory: String!
    var port = 0
    let keys = RedisKeys()

    override func setUp() async throws {
        redis = try RedisServer(persistent: true)
        apns = try await EmulatorStandIn { $0.latencyMillis = 5 }
        client = RedisConnection(url: redis.url, name: "test-client")
        directory = makeTemporaryDirectory("metrics")
        port = freePort()
    }

    override func tearDown() async throws {
        await client.close()
        await apns.stop()
        redis.kill()
    }

    private func startWorker(_ extra: [String: String] = [:]) throws -> WorkerProcess {
        var env = [
            // Enough attempts that a connection the emulator drops (it happens, see issue 8) costs a retry, not a dead letter.
            "RETRY_MAX_ATTEMPTS": "6", "RETRY_BASE_DELAY_MS": "10", "RETRY_MAX_DELAY_MS": "50",
            "REDIS_HEARTBEAT_TTL_MS": "1000", "COLLECTOR_WINDOW_MS": "20", "COLLECTOR_MAX_IN_FLIGHT": "100",
            "METRICS_LISTEN": "127.0.0.1:\(port)",
        ]
        env.merge(extra) { $1 }
        return try WorkerProcess(environment: apns.workerEnvironment(redis: redis, env), logFile: "\(directory!)/worker.log")
    }

    private var base: String { "http://127.0.0.1:\(port)" }

    private func metrics() async -> String { await httpGet("\(base)/metrics")?.body ?? "" }

    private func readiness() async -> (status: Int, body: String)? { await httpGet("\(base)/readyz") }

    private func enqueue(_ range: Range<Int>, prefix: String = "a1", extra: [String: Any] = [:]) async throws {
        let now = Int(Date().timeIntervalSince1970 * 1000)
        try await client.lpush(keys.queue, range.map {
            messageJSON(id: "m\($0)", tokens: [token(prefix, $0)], extra: ["enqueued_at": now].merging(extra) { $1 })
        })
    }

    func testCountersMoveWhileMessagesFlowAndEveryNamedMetricIsExported() async throws {
        let worker = try startWorker()
        try await eventually(timeout: .seconds(30)) { await self.readiness()?.status == 200 }
        let before = await metrics()
        XCTAssertEqual(prometheusSample(before, "push_build_info", ["version": BuildInfo.version, "commit": try VersionTests.printedVersion().commit]), 1, before)
        // Series with labels known in advance exist at 0 from the first scrape, before any event.
        XCTAssertEqual(prometheusSample(before, "push_provider_retries_total", ["provider": "apns", "reason": "ServiceUnavailable"]), 0, before)
        XCTAssertEqual(prometheusSample(before, "push_provider_retries_total", ["provider": "apns", "reason": "GoawayUnprocessed"]), 0, before)
        XCTAssertEqual(prometheusSample(before, "push_notifications_total", ["outcome": "dead_letter", "reason": "Timeout"]), 0, before)
        XCTAssertEqual(prometheusSample(before, "push_provider_responses_total", ["provider": "apns", "status": "503", "reason": "ServiceUnavailable"]), 0, before)
        // A second worker on the same port: a startup error naming the address, before it claims anything.
        let clash = try WorkerProcess(environment: apns.workerEnvironment(redis: redis, ["METRICS_LISTEN": "127.0.0.1:\(port)"]),
                                      logFile: "\(directory!)/clash.log")
        let clashStatus = await clash.waitForExit(timeout: 15)
        XCTAssertEqual(clashStatus, 2)
        XCTAssertTrue(clash.log.contains("metrics.listen 127.0.0.1:\(port): cannot listen"), clash.log)

        try await enqueue(0..<2000)
        // Scraped mid-flow: the claim counter has moved before the last message is acknowledged.
        try await eventually(timeout: .seconds(30)) {
            let text = await self.metrics()
            let claimed = prometheusSample(text, "push_messages_claimed_total") ?? 0
            return claimed > 0 && claimed < 2000
        }
        try await eventually(timeout: .seconds(60)) {
            prometheusSample(await self.metrics(), "push_messages_acknowledged_total") == 2000
        }
        // Failures and feedback have their own series, by reason.
        try await client.lpush(keys.queue, [
            messageJSON(id: "gone", tokens: [token("410a", 1)]),
            messageJSON(id: "toolarge", tokens: [token("4130", 2)]),
            "{not json",
        ])
        try await eventually(timeout: .seconds(30)) {
            prometheusSample(await self.metrics(), "push_messages_acknowledged_total") == 2003
        }
        // The sampled gauges refresh every second (queue lengths every two).
        try await eventually(timeout: .seconds(15)) {
            prometheusSample(await self.metrics(), "push_queue_length", ["list": "dlq"]) == 2
        }
        let text = await metrics()
        let deadLetters = try await client.strings(keys.deadLetters)
        XCTAssertEqual(deadLetters.count, 2, deadLetters.joined(separator: "\n"))
        XCTAssertEqual(prometheusSample(text, "push_messages_claimed_total"), 2003, text)
        XCTAssertEqual(prometheusSample(text, "push_notifications_total", ["outcome": "delivered"]), 2000, text)
        XCTAssertEqual(prometheusSample(text, "push_notifications_total", ["outcome": "feedback", "reason": "Unregistered"]), 1, text)
        XCTAssertEqual(prometheusSample(text, "push_notifications_total", ["outcome": "dead_letter", "reason": "PayloadTooLarge"]), 1, text)
        XCTAssertEqual(prometheusSample(text, "push_notifications_total", ["outcome": "dead_letter", "reason": "InvalidMessage"]), 1, text)
        XCTAssertEqual(prometheusSample(text, "push_provider_responses_total", ["provider": "apns", "status": "200"]), 2000, text)
        XCTAssertEqual(prometheusSample(text, "push_provider_responses_total", ["provider": "apns", "status": "413", "reason": "PayloadTooLarge"]), 1, text)
        XCTAssertEqual(prometheusSample(text, "push_provider_request_duration_seconds_count", ["provider": "apns"]), 2002, text)
        XCTAssertEqual(prometheusSample(text, "push_queue_to_provider_seconds_count", ["provider": "apns", "list": "queue"]), 2000, "only messages that carry enqueued_at")
        XCTAssertEqual(prometheusSample(text, "push_queue_to_provider_seconds_count", ["provider": "apns", "list": "bulk"]) ?? 0, 0, "nothing came from push:queue:bulk")
        // Buckets for APNs latencies, 1 ms to 30 s; the emulator answers after 5 ms.
        XCTAssertEqual(prometheusSample(text, "push_provider_request_duration_seconds_bucket", ["provider": "apns", "le": "0.001"]), 0, text)
        XCTAssertEqual(prometheusSample(text, "push_provider_request_duration_seconds_bucket", ["provider": "apns", "le": "30.0"]), 2002, text)
        XCTAssertEqual(prometheusSample(text, "push_provider_token_renewals_total", ["app": "com.example.chat"]), 1, text)
        XCTAssertGreaterThanOrEqual(prometheusSample(text, "push_provider_connections", ["provider": "apns", "app": "com.example.chat"]) ?? 0, 1, text)
        XCTAssertGreaterThanOrEqual(prometheusSample(text, "push_provider_connections_opened_total", ["provider": "apns", "app": "com.example.chat"]) ?? 0, 1, text)
        // Our own HTTP/2 sessions read the servers' SETTINGS: the emulator allows 1,000 streams per connection.
        XCTAssertGreaterThanOrEqual(prometheusSample(text, "push_provider_streams_limit", ["provider": "apns", "app": "com.example.chat"]) ?? 0, 1000, text)
        XCTAssertEqual(prometheusSample(text, "push_in_flight_notifications"), 0, text)
        XCTAssertEqual(prometheusSample(text, "push_queue_length", ["list": "queue"]), 0, text)
        XCTAssertEqual(prometheusSample(text, "push_queue_length", ["list": "feedback"]), 1, text)
        XCTAssertNotNil(prometheusSample(text, "push_redis_reconnects_total"), text)
        XCTAssertNotNil(prometheusSample(text, "push_messages_merged_total"), text)
        worker.signal(SIGTERM)
        let status = await worker.waitForExit(timeout: 15)
        XCTAssertEqual(status, 0)
    }

    /// `push_notifications_total` names each outcome's app (issue 35): a configured app by its topic, every other
    /// topic as `app="other"`, so a producer inventing topics cannot make series; `provider`, `outcome` and `reason`
    /// stay.
    func testNotificationsAreLabelledByConfiguredAppAndUnknownTopicsShareOneSeries() async throws {
        let worker = try startWorker()
        try await eventually(timeout: .seconds(30)) { await self.readiness()?.status == 200 }
        let before = await metrics()
        // The configured app's known outcomes exist at 0 from the first scrape, as do those only `other` can have.
        XCTAssertEqual(prometheusSample(before, "push_notifications_total",
                                        ["provider": "apns", "app": "com.example.chat", "outcome": "dead_letter", "reason": "Timeout"]), 0, before)
        XCTAssertEqual(prometheusSample(before, "push_notifications_total",
                                        ["app": "other", "outcome": "dead_letter", "reason": "TopicNotConfigured"]), 0, before)

        try await enqueue(0..<5)
        // 40 messages, each for a topic no app has: dead-lettered, all counted under one series.
        try await client.lpush(keys.queue, (0..<40).map { messageJSON(id: "flood\($0)", tokens: [token("b1", $0)], topic: "com.flood.t\($0)") })
        try await client.lpush(keys.queue, ["{not json"])
        // An FCM message that is invalid (no tokens): its dead letter counts under FCM.
        try await client.lpush(keys.queue, [#"{"provider":"fcm","id":"bad-fcm","topic":"com.example.chat","payload":{}}"#])
        try await eventually(timeout: .seconds(60)) {
            prometheusSample(await self.metrics(), "push_messages_acknowledged_total") == 47
        }
        let text = await metrics()
        XCTAssertEqual(prometheusSample(text, "push_notifications_total",
                                        ["provider": "apns", "app": "com.example.chat", "outcome": "delivered"]), 5, text)
        XCTAssertEqual(prometheusSample(text, "push_notifications_total",
                                        ["provider": "apns", "app": "other", "outcome": "dead_letter", "reason": "TopicNotConfigured"]), 40, text)
        XCTAssertEqual(prometheusSample(text, "push_notifications_total",
                                        ["provider": "apns", "app": "other", "outcome": "dead_letter", "reason": "InvalidMessage"]), 1, text)
        XCTAssertEqual(prometheusSample(text, "push_notifications_total",
                                        ["provider": "fcm", "app": "other", "outcome": "dead_letter", "reason": "InvalidMessage"]), 1, text)
        XCTAssertFalse(text.contains("com.flood"), "an unknown topic never becomes a label value:\n\(text)")
        let series = text.split(separator: "\n").filter { $0.hasPrefix("push_notifications_total{") }
        XCTAssertFalse(series.isEmpty, text)
        for line in series {
            XCTAssertTrue(["provider=", "app=", "outcome=", "reason="].allSatisfy { line.contains($0) }, "every series has all four labels: \(line)")
        }
        worker.signal(SIGTERM)
        let status = await worker.waitForExit(timeout: 15)
        XCTAssertEqual(status, 0)
    }

    /// `worker health [--ready]` (docs/tools.md), what a container HEALTHCHECK runs: exit 0 when the running
    /// worker's endpoint answers 200, 1 otherwise (not ready, or nothing listening).
    func testHealthCommandAsksTheRunningWorker() async throws {
        func health(_ arguments: [String], listen: String) throws -> (status: Int32, output: String) {
            try runCommand("/usr/bin/env", ["METRICS_LISTEN=\(listen)", WorkerProcess.binaryPath, "health"] + arguments)
        }
        let worker = try startWorker()
        try await eventually(timeout: .seconds(30)) { await self.readiness()?.status == 200 }
        let listen = "127.0.0.1:\(port)"
        var result = try health([], listen: listen)
        XCTAssertEqual(result.status, 0, result.output)
        XCTAssertTrue(result.output.contains("/healthz: 200"), result.output)
        result = try health(["--ready"], listen: listen)
        XCTAssertEqual(result.status, 0, result.output)
        // A wildcard listen address is asked on loopback, as inside a container.
        XCTAssertEqual(try health([], listen: "0.0.0.0:\(port)").status, 0)

        redis.kill()
        try await eventually(timeout: .seconds(10)) { try health(["--ready"], listen: listen).status == 1 }
        result = try health(["--ready"], listen: listen)
        XCTAssertTrue(result.output.contains("/readyz: 503") && result.output.contains("Redis unreachable"), result.output)
        XCTAssertEqual(try health([], listen: listen).status, 0, "cut off from Redis is not dead")

        let nothing = try health([], listen: "127.0.0.1:\(freePort())")
        XCTAssertEqual(nothing.status, 1, nothing.output)
        XCTAssertEqual(try health([], listen: "").status, 2, "no listener configured: a usage error")
        worker.signal(SIGKILL)
    }

    func testReadinessFollowsRedisAndCredentialsWhileLivenessStaysTrue() async throws {
        let worker = try startWorker(["RETRY_MAX_ATTEMPTS": "3", "APNS_CREDENTIAL_PROBE_MAX_MS": "300"])
        try await eventually(timeout: .seconds(30)) { await self.readiness()?.status == 200 }

        redis.kill()
        try await eventually(timeout: .seconds(10)) {
            guard let answer = await self.readiness() else { return false }
            return answer.status == 503 && answer.body.contains("Redis unreachable (push:queue)")
        }
        let livenessCutOff = await httpGet("\(base)/healthz")?.status
        XCTAssertEqual(livenessCutOff, 200, "cut off from Redis is not dead")
        try redis.start()
        try await eventually(timeout: .seconds(15)) { await self.readiness()?.status == 200 }
        let reconnects = prometheusSample(await metrics(), "push_redis_reconnects_total") ?? 0
        XCTAssertGreaterThanOrEqual(reconnects, 1, "the heartbeat's connection at least was made again")

        // APNs refuses the credential (the key is revoked): still ready (the pod serves every other app), the app
        // named as held, paused, its messages held (far beyond RETRY_MAX_ATTEMPTS=3) rather than dead-lettered...
        await apns.stop()
        try await apns.restart { $0.keys = [] }
        try await enqueue(0..<5)
        try await eventually(timeout: .seconds(15)) {
            guard let answer = await self.readiness() else { return false }
            return answer.status == 200 && answer.body.contains("apps held: APNs rejected the credentials of com.example.chat: InvalidProviderToken")
        }
        XCTAssertTrue(worker.log.contains("APNs rejects this app's credentials"), worker.log)
        let pausedText = await metrics()
        XCTAssertEqual(prometheusSample(pausedText, "push_provider_app_paused", ["provider": "apns", "app": "com.example.chat"]), 1, pausedText)
        try await eventually(timeout: .seconds(15)) { self.apns.answeredCount(status: 403) >= 6 }
        let deadWhilePaused = try await client.length(keys.deadLetters)
        XCTAssertEqual(deadWhilePaused, 0, "nothing dead-lettered while the credential is refused")
        // ...until APNs accepts the key again: delivered, ready, resumed.
        await apns.stop()
        let trusted = apns.trustedKey
        try await apns.restart { $0.keys = [trusted] }
        try await eventually(timeout: .seconds(15)) { await self.readiness()?.body == "ready\n" }
        try await eventually(timeout: .seconds(15)) {
            let queued = try await self.client.length(self.keys.queue)
            return queued == 0 && Set(self.apns.answered().filter { $0.status == 200 }.map(\.token)).count >= 5
        }
        let resumedText = await metrics()
        XCTAssertEqual(prometheusSample(resumedText, "push_provider_app_paused", ["provider": "apns", "app": "com.example.chat"]), 0, resumedText)
        XCTAssertTrue(worker.log.contains("sending resumes"), worker.log)
        let deadLetters = try await client.length(keys.deadLetters)
        XCTAssertEqual(deadLetters, 0)

        worker.signal(SIGTERM)
        let status = await worker.waitForExit(timeout: 15)
        XCTAssertEqual(status, 0)
    }

    func testReadinessSaysDrainingUntilTheProcessExits() async throws {
        let worker = try startWorker([
            "RETRY_MAX_ATTEMPTS": "100", "RETRY_BASE_DELAY_MS": "300", "RETRY_MAX_DELAY_MS": "300", "SHUTDOWN_TIMEOUT_S": "4",
        ])
        try await eventually(timeout: .seconds(30)) { await self.readiness()?.status == 200 }
        // SIGTERM while a message is being retried (APNs answers 503), so the drain lasts until the
        // shutdown deadline.
        try await client.lpush(keys.queue, [messageJSON(id: "busy", tokens: [token("5030", 1)])])
        try await eventually(timeout: .seconds(15)) { self.apns.answered().contains { $0.status == 503 } }
        worker.signal(SIGTERM)
        let exit = Task { await worker.waitForExit(timeout: 30) }
        try await eventually(timeout: .seconds(10)) {
            guard let answer = await self.readiness() else { return false }
            return answer.status == 503 && answer.body.contains("draining")
        }
        let livenessDraining = await httpGet("\(base)/healthz")?.status
        XCTAssertEqual(livenessDraining, 200, "draining is not dead")
        let status = await exit.value
        XCTAssertEqual(status, 0)
    }
}
