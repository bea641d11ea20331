@testable import FCMProvider
import PushEmulator
import Foundation
@testable import HuaweiProvider
import ProviderKit
@testable import Pusher
import PushCore
import TestSupport
import XCTest

/// A real `Scheduler` with `HuaweiService` against the emulator's Huawei side over real TLS on its vendor listener
/// (h2 and HTTP/1.1 by ALPN): v1 with a real OAuth exchange, v3 with a real PS256 JWT, a job of 2,500 tokens in
/// three requests with every token's own outcome, an access token expired under the sender, a renewed credential
/// rejected at once, flow control lowering the app's rate, and every token refused on a quiet app (dead letters, no pause). Tests wait for outcomes,
/// not for time.
final class HuaweiSchedulerTests: XCTestCase {
    private var server: EmulatorStandIn!
    private var key: HuaweiKeyFixture!
    private let box = ResolutionBox()
    private var caches: [AccessTokenCache] = []

    override func setUp() async throws {
        key = try HuaweiKeyFixture()
        let keyFile = key.jsonFile
        server = try await EmulatorStandIn {
            $0.vendorPort = 0
            $0.huawei.apps = [.init(appID: Fixture.appID, clientSecret: Fixture.secret)]
            $0.huawei.serviceAccounts = [try! .init(keyJSONFile: keyFile)]
        }
    }

    override func tearDown() async throws {
        for cache in caches { await cache.shutdown() }
        await server?.stop()
    }

    private var huawei: HuaweiSide { server.emulator.huawei }

    private var settings: HuaweiSettings {
        let endpoint = server.emulator.vendorEndpoint
        return HuaweiSettings(endpoint: endpoint, tokenURI: endpoint + "/oauth2/v3/token", caFile: server.caFile)
    }

    private struct Lane {
        let scheduler: Scheduler
        let service: HuaweiService
        let rateLimit: AppRateLimit
    }

    /// One lane of the app for `api`, built as the worker would: the credential from its files, the lane's settings
    /// from `HuaweiLaneSettings` (libcurl), short retry backoffs and credential probes.
    private func lane(_ api: HuaweiAPI, http2: Bool = true, maxAttempts: Int = 20, concurrent: Int = 1,
                      requestTimeoutMillis: Int? = nil, connections: Int? = nil) throws -> Lane {
        let app = HuaweiApp(topic: Fixture.topic, api: api, appID: Fixture.appID, clientSecretFile: try Fixture.secretFile(),
                            serviceAccountFile: key.jsonFile)
        let credential = try HuaweiCredential.make(for: app, settings: settings)
        if case .clientCredentials(let cache) = credential { caches.append(cache) }
        let rateLimit = HuaweiLaneSettings.rateLimit(for: app)
        var transport = HuaweiLaneSettings.transportSettings(for: app, settings: settings, rateLimit: rateLimit)
        XCTAssertEqual(transport.driver, .nghttp2)
        XCTAssertTrue(transport.fallsBackToHTTP1, "HTTP/1.1 over libcurl where the server offers no h2")
        transport.offersHTTP2 = http2
        transport.initialActiveRequests = concurrent
        transport.retry.baseDelayMillis = 20
        transport.retry.maxDelayMillis = 100
        transport.retry.maxAttempts = maxAttempts
        transport.credentialProbeFirstMillis = 50
        transport.credentialProbeLongestMillis = 200
        if let requestTimeoutMillis { transport.requestTimeoutMillis = requestTimeoutMillis }
        if let connections {
            transport.connections = connections
            transport.initialConnections = connections
        }
        let service = HuaweiService(app: app, credential: credential, deliveries: AppDeliveryRecord(), metrics: .of(HuaweiModule.provider))
        let scheduler = try Scheduler(settings: transport, service: service, sink: box.append)
        if case .clientCredentials(let cache) = credential { cache.wakeOnChange([scheduler]) }
        addTeardownBlock { scheduler.abort() }
        return Lane(scheduler: scheduler, service: service, rateLimit: rateLimit)
    }

    /// `count` tokens, every 97th refused by the emulator's prefix rule (cycling through its prefixes), with the
    /// feedback reason each refused one must get for `api`.
    private static func tokens(_ count: Int, api: HuaweiAPI, tag: String = "a") -> (all: [String], refused: [String: String]) {
        let prefixes: [(prefix: String, v3Reason: String)] = [
            ("unregistered", "Unregistered"), ("invalid", "BadDeviceToken"), ("platform", "Unregistered"),
            ("badtoken", "BadDeviceToken"), ("illegal", "BadDeviceToken"),
        ]
        var all: [String] = []
        var refused: [String: String] = [:]
        for index in 0..<count {
            if index % 97 == 5 {
                let (prefix, v3Reason) = prefixes[(index / 97) % prefixes.count]
                let token = "\(prefix)-\(tag)\(index)"
                all.append(token)
                // v1 lists every refused token in `illegal_tokens`: malformed as far as it says.
                refused[token] = api == .v1 ? "BadDeviceToken" : v3Reason
            } else {
                all.append("IQAAAACy0k\(tag)" + String(format: "%05d", index) + "PushToken")
            }
        }
        return (all, refused)
    }

    /// Waits for `count` outcomes, then drains the lane (its thread ends once nothing is left). A lane that does not
    /// get them all (a failure, already reported) is aborted instead: a drain would wait for them forever.
    private func settle(_ lane: Lane, outcomes count: Int) async throws {
        let arrived = try await box.wait(for: count)
        if arrived.count >= count {
            await lane.scheduler.finish()
        } else {
            lane.scheduler.abort()
        }
    }

    private func outcomesByToken() -> [String: [TokenOutcome]] {
        Dictionary(grouping: box.all, by: \.token).mapValues { $0.map(\.outcome) }
    }

    private static func feedbackReason(_ outcome: TokenOutcome) -> String? {
        if case .feedback(let reason, _) = outcome { return reason }
        return nil
    }

    /// One job of 2,500 tokens: exactly three requests (let go at once), each live token delivered once, each refused
    /// token one feedback with its reason, one outcome per token.
    private func sendTwentyFiveHundred(_ api: HuaweiAPI, http2: Bool) async throws {
        let lane = try lane(api, http2: http2, concurrent: 3)
        let (tokens, refused) = Self.tokens(2500, api: api)
        lane.scheduler.submit([Fixture.job(tokens, collapseID: "chat-7")])
        try await settle(lane, outcomes: tokens.count)

        // The protocol ALPN chose, seen from the server: three requests at once as streams of one connection (h2),
        // or on three connections with no stream at all (HTTP/1.1). v1's token exchange adds one h2 connection.
        let exchange = api == .v1 ? 1 : 0
        if http2 {
            XCTAssertGreaterThanOrEqual(server.emulator.stats.peakConcurrentStreams, 2, "multiplexed")
            XCTAssertEqual(server.emulator.stats.connections, exchange + 1)
        } else {
            XCTAssertEqual(server.emulator.stats.peakConcurrentStreams, exchange, "no h2 stream for a send")
            XCTAssertGreaterThanOrEqual(server.emulator.stats.connections, exchange + 2)
        }
        XCTAssertEqual(huawei.stats.requests, 3, "1,000 + 1,000 + 500")
        XCTAssertEqual(huawei.stats.count(code: "80100000"), 3)
        let live = tokens.filter { refused[$0] == nil }
        XCTAssertEqual(huawei.stats.deliveredByToken, Dictionary(uniqueKeysWithValues: live.map { ($0, 1) }),
                       "every live token delivered exactly once")
        XCTAssertEqual(huawei.stats.delivered(classification: "IM"), live.count, "the app's chat class on every one")
        XCTAssertEqual(box.all.count, tokens.count, "one outcome per token")
        let outcomes = outcomesByToken()
        XCTAssertEqual(outcomes.count, tokens.count)
        for token in tokens {
            if let reason = refused[token] {
                XCTAssertEqual(outcomes[token]?.compactMap(Self.feedbackReason), [reason], token)
            } else {
                XCTAssertEqual(outcomes[token], [.delivered], token)
            }
        }
    }

    func testV1OverHTTP1WithARealOAuthExchange() async throws {
        try await sendTwentyFiveHundred(.v1, http2: false)
        XCTAssertEqual(huawei.stats.tokenEndpointRequests, 1)
        XCTAssertEqual(huawei.stats.accessTokensIssued, 1)
        let request = try XCTUnwrap(huawei.stats.lastRequest)
        XCTAssertEqual(request.path, "/v1/104123456/messages:send")
        XCTAssertEqual(request.headers.first { $0.name == "content-type" }?.value, "application/json;charset=UTF-8")
    }

    func testV1OverHTTP2WithARealOAuthExchange() async throws {
        try await sendTwentyFiveHundred(.v1, http2: true)
        XCTAssertEqual(huawei.stats.accessTokensIssued, 1)
    }

    func testV3OverHTTP2WithARealPS256JWT() async throws {
        try await sendTwentyFiveHundred(.v3, http2: true)
        let request = try XCTUnwrap(huawei.stats.lastRequest)
        XCTAssertEqual(request.path, "/v3/\(key.projectID)/messages:send")
        XCTAssertEqual(request.headers.first { $0.name == "push-type" }?.value, "0")
        XCTAssertEqual(huawei.stats.tokenEndpointRequests, 0, "v3 exchanges nothing")
    }

    func testV3OverHTTP1() async throws {
        try await sendTwentyFiveHundred(.v3, http2: false)
    }

    func testAnAccessTokenExpiredUnderTheSenderIsRenewedAndTheRequestsResent() async throws {
        let lane = try lane(.v1)
        lane.scheduler.submit([Fixture.job(["first-1", "first-2"], seq: 1)])
        _ = try await box.wait(for: 2)
        huawei.expireAccessTokens()
        let (tokens, _) = Self.tokens(1500, api: .v1, tag: "b")
        let live = tokens.filter { !$0.contains("-b") }
        lane.scheduler.submit([Fixture.job(live, seq: 2)])
        try await settle(lane, outcomes: 2 + live.count)

        XCTAssertGreaterThanOrEqual(huawei.stats.count(code: "80200003"), 1, "the expired token was refused")
        XCTAssertEqual(huawei.stats.accessTokensIssued, 2, "renewed once")
        XCTAssertEqual(box.all.count, 2 + live.count)
        XCTAssertTrue(box.all.allSatisfy { $0.outcome == .delivered }, "nothing lost, nothing dead-lettered")
        XCTAssertEqual(huawei.stats.deliveredByToken.count, 2 + live.count)
        XCTAssertTrue(huawei.stats.duplicates.isEmpty)
        XCTAssertEqual(lane.service.renewedCredentialRefusals, 0)
    }

    func testAJWTRefusedAsExpiredIsSignedAgainAndTheRequestResent() async throws {
        let lane = try lane(.v3)
        guard case .serviceAccount(let signer) = lane.service.credential else { return XCTFail("v3 signs") }
        XCTAssertTrue(huawei.failNext(1, with: "80200005"))
        lane.scheduler.submit([Fixture.job(["h1", "h2", "h3"])])
        try await settle(lane, outcomes: 3)
        XCTAssertEqual(huawei.stats.count(code: "80200005"), 1)
        XCTAssertEqual(signer.generation, 2, "signed again after the refusal")
        XCTAssertEqual(box.all.map(\.outcome), Array(repeating: .delivered, count: 3))
        XCTAssertEqual(huawei.stats.deliveredByToken, ["h1": 1, "h2": 1, "h3": 1])
    }

    func testARenewedCredentialRejectedAgainPausesTheAppAndNothingIsDeadLettered() async throws {
        // Two attempts only: without the pause, the rejections would spend them and dead-letter every token.
        let lane = try lane(.v1, maxAttempts: 2)
        XCTAssertTrue(huawei.failNext(5, with: "80200001"))
        lane.scheduler.submit([Fixture.job(["p1", "p2"])])
        try await settle(lane, outcomes: 2)
        XCTAssertEqual(huawei.stats.count(code: "80200001"), 5)
        XCTAssertEqual(lane.service.renewedCredentialRefusals, 1)
        XCTAssertEqual(box.all.map(\.outcome), [.delivered, .delivered])
        XCTAssertEqual(huawei.stats.deliveredByToken, ["p1": 1, "p2": 1])
    }

    func testFlowControlLowersTheAppsRateAndLosesNothing() async throws {
        let lane = try lane(.v1)
        XCTAssertEqual(lane.rateLimit.effectiveTokensPerSecond, 6000)
        XCTAssertTrue(huawei.failNext(2, with: "503"))
        let (tokens, _) = Self.tokens(1200, api: .v1, tag: "c")
        let live = tokens.filter { !$0.contains("-c") }
        lane.scheduler.submit([Fixture.job(live)])
        try await settle(lane, outcomes: live.count)
        XCTAssertEqual(huawei.stats.count(status: 503), 2)
        XCTAssertEqual(lane.rateLimit.effectiveTokensPerSecond, 3000, "halved (once: the two came together)")
        XCTAssertTrue(box.all.allSatisfy { $0.outcome == .delivered })
        XCTAssertEqual(huawei.stats.deliveredByToken, Dictionary(uniqueKeysWithValues: live.map { ($0, 1) }))
    }

    /// One lane, a freshly started app (nothing delivered yet): a request whose every token is refused holds
    /// nothing. Its tokens are dead letters `AllTokensRefused` once each (sent once, never retried), and the app's
    /// next message is delivered at once: no pause, no probe that resends the dead tokens.
    func testEveryTokenRefusedBeforeAnyDeliveryIsDeadLetteredOnceAndHoldsNothing() async throws {
        let lane = try lane(.v1)
        let dead = ["unregistered-1", "invalid-2", "badtoken-3"]
        lane.scheduler.submit([Fixture.job(dead, seq: 1)])
        _ = try await box.wait(for: 3)
        // Then the app's next message (submitted with the first, the two could be answered in either order).
        lane.scheduler.submit([Fixture.job(["live-1", "live-2"], seq: 2)])
        try await settle(lane, outcomes: 5)
        let outcomes = outcomesByToken()
        for token in dead {
            guard case .failed(let reason, _, _, let detail)? = outcomes[token]?.first, outcomes[token]?.count == 1 else {
                return XCTFail("\(token): \(outcomes[token] ?? [])")
            }
            XCTAssertEqual(reason, AllTokensRefusedRule.reason, token)
            XCTAssertTrue(detail?.contains("wrong app, project or region") == true, detail ?? "")
        }
        XCTAssertEqual(outcomes["live-1"], [.delivered])
        XCTAssertEqual(outcomes["live-2"], [.delivered])
        XCTAssertEqual(box.all.count, 5)
        XCTAssertEqual(huawei.stats.refusedTokens, dead.count, "each dead token sent once")
        XCTAssertEqual(huawei.stats.count(code: "80300007"), 1)
    }

    /// A starved server: one connection of 2 streams, each answer after 250 ms, 100 requests handed to libcurl at once
    /// (before the server's SETTINGS are known, so libcurl puts them all on the connection) with a request timeout of
    /// 2 s. Most requests wait inside libcurl (nghttp2) for a stream far longer than 2 s; their deadline
    /// counts only from when they are written, so none is timed out and sent again while the server never had it
    /// (with the deadline counted from PRETRANSFER, 8 and 13 of 150 were sent twice).
    func testAStarvedServerSendsNothingTwiceByOurOwnClock() async throws {
        await server.stop()
        let keyFile = key.jsonFile
        server = try await EmulatorStandIn {
            $0.vendorPort = 0
            $0.vendorMaxConcurrentStreams = 2
            $0.huawei.apps = [.init(appID: Fixture.appID, clientSecret: Fixture.secret)]
            $0.huawei.serviceAccounts = [try! .init(keyJSONFile: keyFile)]
            $0.huawei.faults.latencyMillis = 250
        }
        let lane = try lane(.v1, concurrent: 100, requestTimeoutMillis: 2000, connections: 1)
        let tokens = (0..<100).map { "starved-\($0)" }
        lane.scheduler.submit(tokens.enumerated().map { n, token in Fixture.job([token], seq: UInt64(n + 1)) })
        try await settle(lane, outcomes: tokens.count)
        XCTAssertEqual(box.all.filter { $0.outcome != .delivered }.map { "\($0.outcome)" }, [], "nothing fails")
        // What the server got twice is only what it may have had: a request timed out after it was written (on a
        // loaded machine an answer can take 2 s), or one libcurl sent again on its own; none that waited for a stream.
        let twice = huawei.stats.duplicates.count
        let ambiguous = lane.scheduler.possiblyDuplicated.load(ordering: .relaxed) + lane.scheduler.resentByLibcurl.load(ordering: .relaxed)
        printFigure("starved Huawei server (2 streams, 250 ms answers, 2 s timeout): \(twice) of 100 sent twice, \(ambiguous) possibly duplicated or resent by libcurl")
        XCTAssertLessThanOrEqual(twice, ambiguous, "sent twice beyond what was on the wire: \(huawei.stats.duplicates)")
        XCTAssertEqual(huawei.stats.deliveredByToken.count, tokens.count)
    }

    /// A Huawei host that offers HTTP/1.1 alone by ALPN (as Huawei documents): the lane's first connection, offering h2
    /// and http/1.1, learns it, and every request goes over libcurl's HTTP/1.1 pool; what waited for that first
    /// connection was never sent and spends no attempt (one attempt each here), and nothing is sent twice.
    func testAServerWithoutHTTP2IsReachedOverHTTP1WithoutSpendingAnAttempt() async throws {
        await server.stop()
        let keyFile = key.jsonFile
        server = try await EmulatorStandIn {
            $0.vendorPort = 0
            $0.vendorOffersHTTP2 = false
            $0.huawei.apps = [.init(appID: Fixture.appID, clientSecret: Fixture.secret)]
            $0.huawei.serviceAccounts = [try! .init(keyJSONFile: keyFile)]
        }
        let lane = try lane(.v1, maxAttempts: 1, concurrent: 8)
        let tokens = (0..<40).map { "http1-\($0)" }
        lane.scheduler.submit(tokens.enumerated().map { n, token in Fixture.job([token], seq: UInt64(n + 1)) })
        try await settle(lane, outcomes: tokens.count)
        XCTAssertEqual(box.all.filter { $0.outcome != .delivered }.map { "\($0.outcome)" }, [], "nothing fails")
        XCTAssertEqual(huawei.stats.deliveredByToken.count, tokens.count)
        XCTAssertEqual(huawei.stats.duplicates, [:])
    }

    /// Huawei over HTTP/1.1 (a connection carries one request at a time) answering in 50 ms: one-token chat is not held
    /// to the old 8 connections (40-160 requests a second); the pool grows with the traffic toward `max_connections`
    /// (64 by default). The rate is printed: a figure, not a bound a loaded machine could fail.
    func testOverHTTP1ThePoolGrowsWithTheTraffic() async throws {
        huawei.updateFaults { $0.latencyMillis = 50 }
        let lane = try lane(.v1, http2: false, concurrent: 64)
        XCTAssertEqual(HuaweiSettings().maxConnections, 64)
        let tokens = (0..<600).map { "chat-\($0)" }
        let started = ContinuousClock.now
        lane.scheduler.submit(tokens.enumerated().map { n, token in Fixture.job([token], seq: UInt64(n + 1)) })
        try await settle(lane, outcomes: tokens.count)
        let took = ContinuousClock.now - started
        let seconds = Double(took.components.seconds) + Double(took.components.attoseconds) / 1e18
        printFigure("Huawei over HTTP/1.1 at 50 ms, one token a request: \(Int(Double(tokens.count) / max(seconds, 0.001))) requests/s on \(server.emulator.stats.connections) connections")
        XCTAssertEqual(box.all.filter { $0.outcome != .delivered }.count, 0)
        XCTAssertEqual(huawei.stats.deliveredByToken.count, tokens.count)
        XCTAssertGreaterThan(server.emulator.stats.connections, 8, "the pool grew past the old 8")
    }
}
