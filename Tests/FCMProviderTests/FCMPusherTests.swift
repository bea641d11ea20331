@testable import APNsProvider
@testable import FCMProvider
import Foundation
import Logging
import PushCore
import Pusher
import TestSupport
import XCTest

/// FCM through the Pusher in the test process (so the sanitizer runs of PusherTests cover the access-token thread,
/// the scheduler's credential waits and its wake-ups), beside APNs, against the emulator over HTTP/2 and TLS.
final class FCMPusherTests: XCTestCase {
    /// FCM's rules are its module's: registered, as the worker registers it at start-up.
    override class func setUp() {
        super.setUp()
        _ = PushProvider.fcm
    }

    private func jobs(_ elements: [String]) -> [PushJob] {
        let parser = MessageParser()
        return elements.enumerated().compactMap { index, element in
            guard case .valid(let message, _) = parser.parse(Array(element.utf8), seq: UInt64(index + 1), now: WallClock.nowSeconds()) else {
                XCTFail("not valid: \(element)")
                return nil
            }
            return PushJob(message: message)
        }
    }

    private func pusher(_ fcm: FCMStandIn, box: ResolutionBox) throws -> Pusher {
        var apns = APNsSettings()
        apns.endpoint = .custom(fcm.apns.endpoint)
        apns.caFile = fcm.apns.caFile
        apns.apps = [APNsApp(topic: FCMStandIn.topic, credential: .token(teamID: EmulatorStandIn.teamID, keyID: EmulatorStandIn.keyID,
                                                                         keyFile: fcm.apns.keyFile))]
        var settings = FCMSettings()
        settings.endpoint = fcm.emulator.fcmEndpoint
        settings.caFile = fcm.apns.caFile
        settings.apps = [FCMApp(topic: FCMStandIn.topic, serviceAccountFile: fcm.serviceAccountFile)]
        var retry = RetrySettings()
        retry.maxAttempts = 3
        retry.baseDelayMillis = 10
        retry.maxDelayMillis = 50
        return try Pusher(providers: [APNsModule(settings: apns), FCMModule(settings: settings)], retry: retry, logger: Logger(label: "test"), sink: box.append)
    }

    func testFCMAndAPNsTogetherWithTheAccessTokensRevokedMidway() async throws {
        let fcm = try await FCMStandIn()
        let box = ResolutionBox()
        let pusher = try pusher(fcm, box: box)
        let (input, feed) = AsyncStream.makeStream(of: [PushJob].self)
        let running = Task { await pusher.run(input: input) }
        let count = 1000
        feed.yield(jobs((0..<count).map { fcmMessageJSON(id: "f\($0)", tokens: [fcmToken("d", $0)]) }))
        feed.yield(jobs((0..<count).map { messageJSON(id: "a\($0)", tokens: [token("a1", $0)]) }))
        try await eventually(timeout: .seconds(60)) { fcm.fcm.stats.delivered >= count / 2 }
        fcm.fcm.revokeAccessTokens()
        feed.yield(jobs((count..<2 * count).map { fcmMessageJSON(id: "f\($0)", tokens: [fcmToken("d", $0)]) }
                        + [fcmMessageJSON(id: "gone", tokens: [fcmToken("unregistered", 1)])]))
        feed.finish()
        await running.value
        let outcomes = box.all
        XCTAssertEqual(outcomes.count, 3 * count + 1)
        let delivered = outcomes.filter { $0.outcome == .delivered }.count
        XCTAssertEqual(delivered, 3 * count, "every token delivered: \(outcomes.filter { $0.outcome != .delivered }.prefix(3))")
        XCTAssertEqual(outcomes.first { $0.token == fcmToken("unregistered", 1) }?.outcome.reasonWord, "Unregistered")
        XCTAssertEqual(fcm.fcm.stats.duplicates, [:], "a request answered 401 is sent again, never twice delivered")
        XCTAssertEqual(pusher.outstanding, 0)
        await fcm.stop()
    }

    /// The token endpoint down: FCM requests wait (no attempt spent, however long), then all go once it is back.
    func testRequestsWaitForAnAccessTokenWithoutSpendingAttempts() async throws {
        let fcm = try await FCMStandIn()
        fcm.fcm.setTokenEndpointDown(true)
        let box = ResolutionBox()
        let pusher = try pusher(fcm, box: box)
        let (input, feed) = AsyncStream.makeStream(of: [PushJob].self)
        let running = Task { await pusher.run(input: input) }
        feed.yield(jobs((0..<200).map { fcmMessageJSON(id: "w\($0)", tokens: [fcmToken("d", $0)]) }))
        // More token requests than the retry budget has attempts (3): had the requests spent attempts on the
        // wait, they would be dead letters by now.
        try await eventually(timeout: .seconds(60)) { fcm.emulator.fcmTokens.requestCount >= 4 }
        XCTAssertEqual(box.all.count, 0, "nothing ends while no access token can be had")
        XCTAssertEqual(fcm.fcm.stats.requests, 0)
        fcm.fcm.setTokenEndpointDown(false)
        feed.finish()
        await running.value
        XCTAssertEqual(box.all.filter { $0.outcome == .delivered }.count, 200)
        await fcm.stop()
    }
}

private extension TokenOutcome {
    var reasonWord: String? {
        switch self {
        case .feedback(let reason, _): return reason
        case .failed(let reason, _, _, _): return reason
        default: return nil
        }
    }
}
