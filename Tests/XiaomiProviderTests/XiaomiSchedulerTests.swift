import PushEmulator
import Dispatch
import Foundation
import Logging
import ProviderKit
@testable import Pusher
import PushCore
import TestSupport
@testable import XiaomiProvider
import XCTest

/// A real `Scheduler` lane with the Xiaomi service and the libcurl driver against the emulator's MiPush side,
/// over real TLS on its vendor listener, over HTTP/1.1 and over h2: batches of 1,000 regIds, each token's
/// outcome from `data.bad_regids`, the daily quota (10034) holding the app without spending attempts, and the
/// app's rate lowered by 10027. Tests wait for events (outcomes, the emulator's counters), never for time.
final class XiaomiSchedulerTests: XCTestCase {
    static let secret = "mi-app-secret-Zm9vYmFy"
    static let quotaSecret = "mi-quota-secret"
    static let channel = "im-private"

    private var server: EmulatorStandIn!

    override func setUp() async throws {
        server = try await EmulatorStandIn {
            $0.vendorPort = 0
            $0.xiaomi.apps = [
                .init(appSecret: Self.secret, packages: [XiaomiFixtures.topic], channels: [Self.channel]),
                .init(appSecret: Self.quotaSecret, packages: [XiaomiFixtures.topic], channels: [Self.channel], dailyQuota: 1000),
            ]
        }
    }

    override func tearDown() async throws {
        await server?.stop()
    }

    private var xiaomi: XiaomiSide { server.emulator.xiaomi }

    private struct Lane {
        let scheduler: Scheduler
        let box: ResolutionBox
        let rate: AppRateLimit
        let credential: CredentialState
    }

    /// A lane as the worker would make it (`XiaomiLanes`), for the app with `secret`; `adjust` changes its
    /// transport settings.
    private func lane(http2: Bool, secret: String = XiaomiSchedulerTests.secret, templateID: String = "", requestsPerSecond: Int = 1000,
                      clock: any TransportClock = SystemTransportClock(), logger: Logger? = nil,
                      adjust: (inout TransportSettings) -> Void = { _ in }) throws -> Lane {
        let app = XiaomiFixtures.app(secret: secret, channelID: Self.channel, templateID: templateID, requestsPerSecond: requestsPerSecond)
        let settings = XiaomiSettings(endpoint: "https://127.0.0.1:\(server.emulator.vendorPort)", caFile: server.caFile, apps: [app])
        XCTAssertEqual(settings.problems(), [])
        let rate = XiaomiLanes.rateLimit(for: app)
        var transport = XiaomiLanes.transportSettings(for: app, in: settings, rateLimit: rate)
        transport.offersHTTP2 = http2
        transport.clock = clock
        transport.retry.baseDelayMillis = 10
        transport.retry.maxDelayMillis = 50
        adjust(&transport)
        let service = try XiaomiService(app: app, settings: settings, metrics: .of(XiaomiModule.provider), wallMillis: { clock.wallMillis() })
        let box = ResolutionBox()
        let credential = CredentialState()
        let scheduler = try Scheduler(settings: transport, service: service, logger: logger, credential: credential, driver: nil,
                                      sink: box.append)
        addTeardownBlock { scheduler.abort() }
        return Lane(scheduler: scheduler, box: box, rate: rate, credential: credential)
    }

    private static let payload = #"{"notification":{"title":"Alice","body":"hi, what's up? 标"},"data":{"cid":"c1"}}"#

    /// 2,500 regIds, some of them bad by the emulator's prefixes (`unregistered`, `invalid`, `badtoken`,
    /// `illegal`), the live ones with characters the form must escape.
    private static func regIDs() -> (all: [String], bad: Set<String>) {
        let prefixes = ["unregistered", "invalid", "badtoken", "illegal"]
        var all: [String] = []
        var bad: Set<String> = []
        for index in 0..<2500 {
            if index % 97 == 3 {
                let regID = "\(prefixes[index % prefixes.count])-\(index)"
                all.append(regID)
                bad.insert(regID)
            } else {
                all.append(String(format: "mi%05d/AbC+dEf=~x", index))
            }
        }
        return (all, bad)
    }

    private func sendsABigJobWithBadRegIDs(http2: Bool) async throws {
        let lane = try lane(http2: http2, templateID: "tpl-chat")
        let (regIDs, bad) = Self.regIDs()
        XCTAssertEqual(bad.count, 26)
        lane.scheduler.submit([XiaomiFixtures.job(payload: Self.payload, tokens: regIDs)])
        let resolutions = try await lane.box.wait(for: 2500)

        XCTAssertEqual(xiaomi.stats.requests, 3, "2,500 regIds in requests of 1,000")
        XCTAssertEqual(xiaomi.stats.count(code: "0"), 3)
        let live = regIDs.filter { !bad.contains($0) }
        XCTAssertEqual(xiaomi.stats.deliveredByToken, Dictionary(uniqueKeysWithValues: live.map { ($0, 1) }),
                       "every live regId delivered exactly once")
        XCTAssertEqual(xiaomi.stats.refusedTokens, bad.count)
        XCTAssertEqual(xiaomi.stats.delivered(classification: Self.channel), live.count, "the app's private channel on every send")

        XCTAssertEqual(resolutions.count, 2500, "one outcome per token")
        XCTAssertEqual(Set(resolutions.map(\.token)), Set(regIDs))
        for resolution in resolutions {
            if bad.contains(resolution.token) {
                guard case .feedback("Unregistered", let at) = resolution.outcome else {
                    XCTFail("\(resolution.token): \(resolution.outcome)")
                    continue
                }
                XCTAssertGreaterThan(at, 1_700_000_000_000)
            } else {
                XCTAssertEqual(resolution.outcome, .delivered, resolution.token)
            }
        }
        // What went on the wire: the key, the form, and the protocol asked for.
        let last = try XCTUnwrap(xiaomi.stats.lastRequest)
        XCTAssertEqual(last.path, "/v3/message/regid")
        XCTAssertEqual(last.headers.first { $0.name == "authorization" }?.value, "key=\(Self.secret)")
        XCTAssertEqual(last.headers.first { $0.name == "content-type" }?.value, "application/x-www-form-urlencoded;charset=UTF-8")
        let streams = server.emulator.stats.peakConcurrentStreams
        if http2 { XCTAssertGreaterThan(streams, 0, "h2") } else { XCTAssertEqual(streams, 0, "HTTP/1.1: no HTTP/2 stream was opened") }
    }

    func testAJobOf2500RegIDsOverHTTP1() async throws {
        try await sendsABigJobWithBadRegIDs(http2: false)
    }

    func testAJobOf2500RegIDsOverHTTP2() async throws {
        try await sendsABigJobWithBadRegIDs(http2: true)
    }

    /// The app's quota (1,000 a day) is spent by the job's first request: the rest of the job waits, with no
    /// outcome and no attempt spent, while the Xiaomi day lasts (each try after the rollover the lane computed
    /// meets the same day on the emulator's frozen clock), and all of it goes once the day has rolled over.
    func testASpentDailyQuotaHoldsTheRestOfTheJobUntilTheNextDay() async throws {
        xiaomi.clock.freeze()
        // The lane's wall clock stands 250 ms before Beijing midnight: each 10034 holds the app for 250 ms of
        // real time, the rollover the service computes from `quota_reset`.
        let beforeMidnight: Int64 = 1_767_283_200_000 - 250
        let lane = try lane(http2: true, secret: Self.quotaSecret, clock: WallFrozenClock(wallMillis: beforeMidnight)) {
            // One request at a time: the first carries the first 1,000 regIds, the quota's worth.
            $0.initialActiveRequests = 1
            $0.maxActiveRequests = 1
            // A quota wait that spent attempts would end every waiting regId as a dead letter after two.
            $0.retry.maxAttempts = 2
        }
        let regIDs = (0..<2500).map { String(format: "q%04d", $0) }
        lane.scheduler.submit([XiaomiFixtures.job(payload: Self.payload, tokens: regIDs)])

        // The lane holds the app until the rollover it computed...
        try await eventually { lane.credential.holdUntil(.chat, now: DispatchTime.now().uptimeNanoseconds) != nil }
        let now = DispatchTime.now().uptimeNanoseconds
        if let until = lane.credential.holdUntil(.chat, now: now) { XCTAssertLessThanOrEqual(until - now, 250_000_000, "until the Xiaomi day rolls over") }
        // ...and tries again after it, meeting the same Xiaomi day: three refusals, not one dead letter.
        try await eventually { self.xiaomi.stats.count(code: "10034") >= 3 }
        XCTAssertEqual(xiaomi.stats.count(code: "0"), 1, "only the first request went")
        XCTAssertEqual(xiaomi.messagesToday(appSecret: Self.quotaSecret), 1000)
        let early = lane.box.all
        XCTAssertEqual(early.count, 1000, "the first request's regIds have their outcome; the rest wait")
        XCTAssertEqual(Set(early.map(\.token)), Set(regIDs.prefix(1000)))
        XCTAssertTrue(early.allSatisfy { $0.outcome == .delivered }, "no failure, no dead letter: \(early.filter { $0.outcome != .delivered }.prefix(3))")
        XCTAssertEqual(lane.scheduler.outstanding.load(ordering: .relaxed), 1500)

        // The emulator's day rolls over, with room for the 1,500 left. The day first: the lane tries again every
        // 250 ms, and a try between the two calls must meet the new day at the old quota (its 1,000 then, the rest
        // once the quota is raised), never the old day at the new quota (500 counted yesterday: seen on loaded
        // machines as 1,000 today where 1,500 were sent, also while the emulator read the day when a request came
        // rather than when it counted it).
        xiaomi.startNextDay()
        xiaomi.setDailyQuota(appSecret: Self.quotaSecret, 1500)
        let all = try await lane.box.wait(for: 2500)
        XCTAssertEqual(all.count, 2500)
        XCTAssertTrue(all.allSatisfy { $0.outcome == .delivered }, "\(all.filter { $0.outcome != .delivered }.prefix(3))")
        XCTAssertEqual(xiaomi.stats.deliveredByToken, Dictionary(uniqueKeysWithValues: regIDs.map { ($0, 1) }), "each once")
        XCTAssertEqual(xiaomi.messagesToday(appSecret: Self.quotaSecret), 1500)
    }

    /// The emulator allows the app 2 requests a second (its window held still): the rest are answered 10027,
    /// which lowers the lane's rate; once the emulator lets them through, every regId is delivered once.
    func testTooManyCallsLowerTheAppsRateAndLoseNothing() async throws {
        xiaomi.clock.freeze()
        xiaomi.updateFaults { $0.requestsPerSecond = 2 }
        let lane = try lane(http2: true, requestsPerSecond: 1000) { $0.retry.maxAttempts = 1000 }
        XCTAssertEqual(lane.rate.effectiveRequestsPerSecond, 1000)
        let jobs = (0..<6).map { XiaomiFixtures.job(payload: Self.payload, tokens: ["rate-\($0)-a", "rate-\($0)-b"], seq: UInt64($0 + 1)) }
        lane.scheduler.submit(jobs)

        try await eventually { self.xiaomi.stats.count(code: "10027") >= 1 && (lane.rate.effectiveRequestsPerSecond ?? 0) < 1000 }
        XCTAssertLessThanOrEqual(lane.rate.effectiveRequestsPerSecond ?? .max, 500, "halved (at least once)")
        XCTAssertTrue(lane.box.all.allSatisfy { $0.outcome == .delivered }, "a 10027 is no outcome")

        xiaomi.updateFaults { $0.requestsPerSecond = nil }
        let all = try await lane.box.wait(for: 12)
        XCTAssertEqual(all.count, 12)
        XCTAssertTrue(all.allSatisfy { $0.outcome == .delivered }, "\(all.filter { $0.outcome != .delivered })")
        XCTAssertEqual(Set(all.map(\.token)).count, 12)
        XCTAssertEqual(xiaomi.stats.deliveredByToken.count, 12)
        XCTAssertTrue(xiaomi.stats.duplicates.isEmpty, "\(xiaomi.stats.duplicates)")
    }
}

extension XiaomiSchedulerTests {
    /// A 503 with `Retry-After: 3600` (flow control) is retried no sooner than the hour it asks for, over libcurl
    /// (which read no response header but the status, so the lane retried after its own 10 to 50 ms), on h2 and
    /// on HTTP/1.1. The lane's "request retried" line says the delay it chose.
    func testAFlowControlAnswersRetryAfterIsHonouredOverBothProtocols() async throws {
        xiaomi.updateFaults {
            $0.flowControl = true
            $0.retryAfterSeconds = 3600
        }
        for http2 in [true, false] {
            let logs = CapturedLogs()
            let lane = try lane(http2: http2, logger: logs.logger(level: .debug)) { $0.retry.maxAttempts = 3 }
            lane.scheduler.submit([XiaomiFixtures.job(payload: Self.payload, tokens: ["after-\(http2)"])])
            let retried = { logs.lines.filter { $0.message.hasSuffix("request retried") }.compactMap { $0.metadata["delay_ms"].flatMap { Int("\($0)") } } }
            try await eventually { !retried().isEmpty }
            XCTAssertEqual(retried().first, 3_600_000, "h2 \(http2): the retry waits the hour Retry-After asks for")
            XCTAssertEqual(lane.box.all.count, 0, "h2 \(http2): no outcome while it waits (no attempt spent on an early retry)")
            lane.scheduler.abort()
        }
    }
}

/// The system's uptime with a wall clock that stands still: the lane's deadlines and holds run in real time
/// (libcurl's wire times are the system's), while the wall time the quota day is computed from is the test's.
struct WallFrozenClock: TransportClock {
    let frozenMillis: Int64
    init(wallMillis: Int64) { frozenMillis = wallMillis }
    func uptimeNanoseconds() -> UInt64 { DispatchTime.now().uptimeNanoseconds }
    func wallMillis() -> Int64 { frozenMillis }
    func wallSeconds() -> Int64 { frozenMillis / 1000 }
}
