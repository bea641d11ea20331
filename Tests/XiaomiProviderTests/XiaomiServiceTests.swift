import Foundation
import ProviderKit
import Pusher
import PushCore
import TestSupport
@testable import XiaomiProvider
import XCTest

/// The service's fixed parts (path, headers, credential, batch size), its secret file, the settings' checks and
/// a lane's transport settings.
final class XiaomiServiceTests: XCTestCase {
    func testRequestsCarryTheKeyAsAHeaderAndUpToAThousandRegIDs() throws {
        let service = try XiaomiFixtures.service(XiaomiFixtures.app(secret: "  c2VjcmV0K2tleQ==  "))
        let context = JobContext(job: XiaomiFixtures.job(payload: "{}"))
        XCTAssertEqual(service.name, "Xiaomi")
        XCTAssertEqual(service.batchLimit, 1000)
        XCTAssertEqual(service.path(for: context, tokens: RequestTokens(0)).fixed, "/v3/message/regid")
        XCTAssertEqual(service.path(for: context, tokens: RequestTokens(0)).suffix, "")
        guard case .none = service.authorization() else { return XCTFail("the key is a header, not a bearer") }
        let headers = service.headerFields(for: context, bearer: nil)
        XCTAssertEqual(headers.map(\.name), ["content-type", "authorization"])
        XCTAssertEqual(headers.map(\.value), ["application/x-www-form-urlencoded;charset=UTF-8", "key=c2VjcmV0K2tleQ=="],
                       "lower-case key=, the secret trimmed")
    }

    func testTheSecretNeverShowsInDescriptionsOrReflection() throws {
        let secret = "s3cr3t-value-XYZ"
        let app = XiaomiFixtures.app(secret: secret)
        let service = try XiaomiFixtures.service(app)
        var dumped = ""
        dump(service, to: &dumped)
        for text in [String(describing: service), String(reflecting: service), dumped, "\(app)", "\(XiaomiSettings(apps: [app]))"] {
            XCTAssertFalse(text.contains(secret), text)
        }
        XCTAssertTrue(String(describing: service).contains(XiaomiFixtures.topic))
    }

    func testSecretFilesThatCannotServeAreStartupErrorsNamingTheFile() throws {
        let missing = makeTemporaryDirectory("xiaomi") + "/absent.txt"
        let cases: [(file: String, says: String)] = [
            (missing, "cannot read"),
            (XiaomiFixtures.secretFile(" \n\t "), "is empty"),
            (XiaomiFixtures.secretFile("abc\ndef-hidden-part"), "space, a control character"),
            (XiaomiFixtures.secretFile("abc def-hidden-part"), "space, a control character"),
            (XiaomiFixtures.secretFile(String(repeating: "k", count: 5000)), "does not hold"),
        ]
        for (file, says) in cases {
            let app = XiaomiApp(topic: XiaomiFixtures.topic, appSecretFile: file)
            XCTAssertThrowsError(try XiaomiService(app: app, settings: XiaomiSettings(apps: [app]), metrics: .of(XiaomiModule.provider))) { error in
                let text = "\(error)"
                XCTAssertTrue(text.contains(file), text)
                XCTAssertTrue(text.contains(says), text)
                XCTAssertFalse(text.contains("hidden-part"), "never the content: \(text)")
            }
        }
        let app = XiaomiApp(topic: XiaomiFixtures.topic, appSecretFile: "")
        XCTAssertThrowsError(try XiaomiService(app: app, settings: XiaomiSettings(apps: [app]), metrics: .of(XiaomiModule.provider)))
    }

    func testABadQuotaResetIsAStartupError() throws {
        let app = XiaomiFixtures.app()
        XCTAssertThrowsError(try XiaomiService(app: app, settings: XiaomiSettings(quotaReset: "midnight", apps: [app]), metrics: .of(XiaomiModule.provider))) {
            XCTAssertTrue("\($0)".contains("xiaomi.quota_reset"), "\($0)")
        }
    }

    func testSettingsDefaultsAndProblems() {
        let settings = XiaomiSettings()
        XCTAssertEqual(settings.endpoint, "https://api.xmpush.xiaomi.com")
        XCTAssertEqual(settings.connections, 2)
        XCTAssertEqual(settings.maxConnections, 64)
        XCTAssertEqual(settings.requestTimeoutMillis, 10_000)
        XCTAssertEqual(settings.quotaReset, "00:00+08:00")
        XCTAssertFalse(settings.isEnabled)
        let app = XiaomiApp(topic: "com.example.chat", appSecretFile: "secret.txt")
        XCTAssertEqual(app.package, "com.example.chat", "the topic unless given")
        XCTAssertEqual(app.requestsPerSecond, 500, "the QPS tier every app has")
        XCTAssertEqual(app.channelID, "")
        XCTAssertEqual(app.templateID, "")
        XCTAssertEqual(XiaomiSettings(apps: [app]).problems(), [])
        XCTAssertEqual(XiaomiSettings(apps: [app]).app(topic: "com.example.chat"), app)

        let bad = XiaomiSettings(endpoint: "http://api.xmpush.xiaomi.com/", connections: 0, maxConnections: 0, requestTimeoutMillis: 0,
                                 quotaReset: "25:00+08:00",
                                 apps: [app, XiaomiApp(topic: "com.example.chat", package: "a,b", appSecretFile: "", requestsPerSecond: 0),
                                        XiaomiApp(topic: "", appSecretFile: "s")])
        let problems = bad.problems()
        for key in ["xiaomi.endpoint", "xiaomi.connections", "xiaomi.max_connections", "xiaomi.request_timeout_ms", "xiaomi.quota_reset",
                    "xiaomi.apps.1.topic com.example.chat is configured twice", "xiaomi.apps.1.package", "xiaomi.apps.1.app_secret_file",
                    "xiaomi.apps.1.requests_per_s", "xiaomi.apps.2.topic is empty", "xiaomi.apps.2.package"] {
            XCTAssertTrue(problems.contains { $0.hasPrefix(key) }, "\(key) in \(problems)")
        }
        XCTAssertEqual(problems.count, 11, "\(problems)")
    }

    func testALanesTransportSettings() {
        let app = XiaomiApp(topic: "com.example.chat", appSecretFile: "secret.txt", requestsPerSecond: 2000)
        let settings = XiaomiSettings(endpoint: "https://127.0.0.1:8445", caFile: "ca.pem", connections: 3, maxConnections: 9,
                                      requestTimeoutMillis: 4000, apps: [app])
        let rate = XiaomiLanes.rateLimit(for: app)
        XCTAssertEqual(rate.requestsPerSecond, 2000)
        XCTAssertNil(rate.tokensPerSecond, "Xiaomi counts requests, not devices")
        let transport = XiaomiLanes.transportSettings(for: app, in: settings, rateLimit: rate)
        XCTAssertEqual(transport.baseURL, "https://127.0.0.1:8445")
        XCTAssertEqual(transport.caFile, "ca.pem")
        XCTAssertEqual(transport.driver, .nghttp2)
        XCTAssertTrue(transport.fallsBackToHTTP1, "HTTP/1.1 over libcurl where MiPush offers no h2")
        XCTAssertEqual(transport.initialConnections, 3)
        XCTAssertEqual(transport.connections, 9)
        XCTAssertEqual(transport.requestTimeoutMillis, 4000)
        XCTAssertGreaterThanOrEqual(transport.responseBodyLimit, 1000 * 1025, "a thousand bad regIds of the longest kind")
        XCTAssertTrue(transport.rateLimit === rate, "the app's one rate, shared by its lanes")
        XCTAssertNil(transport.streamsBeforeFirstSuccess)
        XCTAssertEqual(transport.app, "com.example.chat")
        XCTAssertTrue(transport.offersHTTP2, "h2 where offered, HTTP/1.1 otherwise")
        let second = XiaomiLanes.transportSettings(for: app, in: settings, rateLimit: rate, lane: 1, lanes: 2)
        XCTAssertEqual(second.lane, 1)
        XCTAssertEqual(second.initialConnections, 2, "3 connections over 2 lanes, rounded up")
        XCTAssertEqual(second.connections, 5)
        let nonsense = XiaomiLanes.transportSettings(for: app, in: XiaomiSettings(connections: -5, maxConnections: Int.min, apps: [app]),
                                                     rateLimit: rate, lanes: 0)
        XCTAssertEqual(nonsense.initialConnections, 1, "no trap on any count")
        XCTAssertEqual(nonsense.connections, 1)
    }
}

/// A Xiaomi app whose devices registered in another region sends to that region's host (another host names their
/// regIds invalid): its own `endpoint` over the block's, checked like it.
final class XiaomiRegionTests: XCTestCase {
    func testAnAppsOwnEndpointIsWhereItsLanesSendAndIsChecked() {
        let global = XiaomiApp(topic: "a", appSecretFile: "s", endpoint: "https://sgp-api.xmpush.global.xiaomi.com")
        var settings = XiaomiSettings(apps: [global, XiaomiApp(topic: "b", appSecretFile: "s")])
        XCTAssertEqual(XiaomiLanes.transportSettings(for: settings.apps[0], in: settings, rateLimit: .unlimited, lane: 0, lanes: 1).baseURL,
                       "https://sgp-api.xmpush.global.xiaomi.com")
        XCTAssertEqual(XiaomiLanes.transportSettings(for: settings.apps[1], in: settings, rateLimit: .unlimited, lane: 0, lanes: 1).baseURL,
                       XiaomiSettings.defaultEndpoint)
        XCTAssertEqual(settings.problems(), [])
        settings.apps[1].endpoint = "http://insecure.example"
        XCTAssertEqual(settings.problems().count, 1)
        XCTAssertTrue(settings.problems()[0].contains("xiaomi.apps.1.endpoint"), settings.problems()[0])
    }
}
