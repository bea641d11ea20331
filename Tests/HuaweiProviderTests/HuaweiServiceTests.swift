@testable import FCMProvider
import Foundation
@testable import HuaweiProvider
import ProviderKit
@testable import Pusher
import PushCore
import TestSupport
import XCTest

/// The service as the scheduler calls it, without a network: paths and headers of both APIs, the job's body made
/// once and its ttl counted down at each send, the app's delivery memory shared by its lanes, and a renewed
/// credential rejected at once pausing the app instead of being resent until its attempts run out.
final class HuaweiServiceTests: XCTestCase {
    private let clock = ManualTransportClock()
    private var caches: [AccessTokenCache] = []

    override func tearDown() async throws {
        for cache in caches { await cache.shutdown() }
    }

    /// A v1 service whose access tokens come from a stub exchange (no endpoint): "token-1", "token-2", ...
    private func v1Service(deliveries: AppDeliveryRecord = AppDeliveryRecord()) async throws -> HuaweiService {
        let issued = Locked(0)
        let cache = AccessTokenCache(name: "test") { _ in
            .granted(accessToken: Secret("token-\(issued.withLock { $0 += 1; return $0 })"), expiresIn: 3600)
        }
        caches.append(cache)
        try await eventually { cache.state.token != nil }
        return HuaweiService(app: HuaweiApp(topic: Fixture.topic, appID: Fixture.appID, category: "IM"),
                             credential: .clientCredentials(cache), deliveries: deliveries, metrics: .of(HuaweiModule.provider), clock: clock)
    }

    private func v3Service() throws -> HuaweiService {
        let key = try HuaweiKeyFixture()
        let signer = try HuaweiJWTSigner(account: try HuaweiServiceAccount.load(path: key.jsonFile))
        return HuaweiService(app: HuaweiApp(topic: Fixture.topic, api: .v3, serviceAccountFile: key.jsonFile),
                             credential: .serviceAccount(signer), deliveries: AppDeliveryRecord(), metrics: .of(HuaweiModule.provider), clock: clock)
    }

    private func answer(_ service: HuaweiService, _ status: Int, _ body: String, job: JobContext, count: Int = 1) -> ServiceAnswer {
        service.classify(status: status, body: Array(body.utf8), retryAfter: nil, job: job, tokens: Fixture.tokens(count))
    }

    /// Each message in its own class: chat with the app's `category`, `kind: system` with `system_category`, the
    /// bulk list with `bulk_category` ("" sends none: Huawei's default, never the chat class).
    func testEachMessageClassCarriesItsOwnCategory() throws {
        let key = try HuaweiKeyFixture()
        let signer = try HuaweiJWTSigner(account: try HuaweiServiceAccount.load(path: key.jsonFile))
        let app = HuaweiApp(topic: Fixture.topic, api: .v3, serviceAccountFile: key.jsonFile, category: "IM", systemCategory: "ACCOUNT")
        let service = HuaweiService(app: app, credential: .serviceAccount(signer), deliveries: AppDeliveryRecord(),
                                    metrics: .of(HuaweiModule.provider), clock: clock)
        func category(kind: MessageKind, lane: Lane) -> String? {
            let job = Fixture.job(["t1"])
            let seq = lane == .bulk ? PipelineSeq.make(claimSequence: Lane.bulkSequenceBase + 1, shard: 0) : 1
            let message = PushMessage(seq: seq, id: "m", kind: kind, uuid: nil, headers: job.headers, payload: job.payload,
                                      tokens: job.tokens, enqueuedAtMillis: nil)
            let context = JobContext(job: PushJob(message: message))
            guard case .bytes(let bytes) = service.body(for: context, tokens: Fixture.tokens(1)) else { return nil }
            let document = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any]
            let notification = (document?["payload"] as? [String: Any])?["notification"] as? [String: Any]
            return notification?["category"] as? String
        }
        XCTAssertEqual(category(kind: .private, lane: .chat), "IM")
        XCTAssertEqual(category(kind: .group, lane: .chat), "IM")
        XCTAssertEqual(category(kind: .system, lane: .chat), "ACCOUNT")
        XCTAssertNil(category(kind: .private, lane: .bulk), "a broadcast never goes out as chat")
    }

    func testPathsAndHeadersOfBothAPIs() async throws {
        let job = JobContext(job: Fixture.job(["t1"]))
        let v1 = try await v1Service()
        XCTAssertEqual(v1.batchLimit, 1000)
        XCTAssertEqual(v1.path(for: job, tokens: Fixture.tokens(1)).fixed, "/v1/104123456/messages:send")
        XCTAssertEqual(v1.headerFields(for: job, bearer: "abc").map { "\($0.name): \($0.value)" },
                       ["content-type: application/json;charset=UTF-8", "authorization: Bearer abc"])
        guard case .bearer("token-1", generation: 1) = v1.authorization() else { return XCTFail("\(v1.authorization())") }

        let v3 = try v3Service()
        XCTAssertEqual(v3.path(for: job, tokens: Fixture.tokens(1)).fixed, "/v3/388421841221234567/messages:send")
        XCTAssertEqual(v3.headerFields(for: job, bearer: "jwt").map { "\($0.name): \($0.value)" },
                       ["content-type: application/json", "push-type: 0", "authorization: Bearer jwt"])
        guard case .bearer(let jwt, generation: 1) = v3.authorization() else { return XCTFail("\(v3.authorization())") }
        XCTAssertEqual(jwt.split(separator: ".").count, 3)
    }

    func testTheJobsBodyIsMadeOnceAndItsTTLCountedDownAtEachSend() async throws {
        let service = try await v1Service()
        let expiring = JobContext(job: Fixture.job(["t1", "t2"], expiration: clock.wallSeconds() + 100))
        func ttl() -> String? {
            let body = service.body(for: expiring, tokens: Fixture.tokens(2)).object
            return ((body?["message"] as? [String: Any])?["android"] as? [String: Any])?["ttl"] as? String
        }
        XCTAssertEqual(ttl(), "100s")
        clock.advance(by: .seconds(30))
        XCTAssertEqual(ttl(), "70s", "the seconds left at this send, not at the first")

        let plain = JobContext(job: Fixture.job(["a", "b", "c"]))
        let first = service.body(for: plain, tokens: RequestTokens(0, rest: [2])).bytes
        let cached = try XCTUnwrap(plain.serviceCache)
        let second = service.body(for: plain, tokens: RequestTokens(1)).bytes
        XCTAssertTrue(plain.serviceCache === cached, "made once per job")
        XCTAssertEqual((jsonObject(first)["message"] as? [String: Any])?["token"] as? [String], ["a", "c"])
        XCTAssertEqual((jsonObject(second)["message"] as? [String: Any])?["token"] as? [String], ["b"])
    }

    func testTheDeliveryRecordIsSharedByTheAppsLanes() async throws {
        let record = AppDeliveryRecord()
        let laneA = try await v1Service(deliveries: record)
        let laneB = try await v1Service(deliveries: record)
        let refused = #"{"code":"80300007","msg":"{\"illegal_tokens\":[\"t1\"]}"}"#
        let job = JobContext(job: Fixture.job(["t1"]))
        XCTAssertEqual(answer(laneB, 400, refused, job: job).decision.reason, AllTokensRefusedRule.reason,
                       "nothing delivered yet: a dead letter to replay, not feedback, and no pause")
        _ = answer(laneA, 200, #"{"code":"80000000","msg":"Success"}"#, job: job)
        XCTAssertEqual(answer(laneB, 400, refused, job: job).decision,
                       .feedback(reason: "BadDeviceToken", timestampMillis: clock.wallMillis()), "the other lane delivered just now")
        clock.advance(by: .seconds(600))
        XCTAssertEqual(answer(laneB, 400, refused, job: job).decision.reason, AllTokensRefusedRule.reason,
                       "ten minutes without a delivery")
    }

    func testARenewedCredentialRejectedAtOncePausesTheAppInsteadOfResending() async throws {
        let service = try await v1Service()
        let job = JobContext(job: Fixture.job(["t1"]))
        let rejected = #"{"code":"80200001","msg":"Oauth authentication error."}"#
        XCTAssertEqual(answer(service, 401, rejected, job: job).decision, .renewAndResend(reason: "80200001"))
        service.renew(generation: 1)
        try await eventually { service.credential.authorization().generation == 2 }
        XCTAssertEqual(service.renewedCredentialRefusals, 0)
        // The renewed token is rejected too: the app pauses (authorization says so once), nothing is resent as new.
        XCTAssertEqual(answer(service, 401, rejected, job: job).decision, .renewAndResend(reason: "80200001"))
        service.renew(generation: 2)
        XCTAssertEqual(service.renewedCredentialRefusals, 1)
        guard case .refused(let reason) = service.authorization() else { return XCTFail("the app must pause") }
        XCTAssertTrue(reason.hasPrefix("CredentialRejected: "), reason)
        XCTAssertTrue(reason.contains("80200001"), reason)
        // The pause's probe goes with a credential; rejected again, it is a refusal (the pause doubles), and the
        // next probe gets a new token.
        try await eventually { service.credential.authorization().generation == 3 }
        XCTAssertEqual(service.authorization().generation, 3)
        XCTAssertEqual(answer(service, 401, rejected, job: job).decision, .credentialRefused(reason: "80200001"))
        try await eventually { service.credential.authorization().generation == 4 }
        // Accepted: a later rejection is a first one again.
        _ = answer(service, 200, #"{"code":"80000000","msg":"Success"}"#, job: job)
        XCTAssertEqual(answer(service, 401, rejected, job: job).decision, .renewAndResend(reason: "80200001"))
        // An old generation's rejection (a request that was in flight) renews nothing twice.
        service.renew(generation: 4)
        service.renew(generation: 4)
        XCTAssertEqual(service.renewedCredentialRefusals, 1)
    }
}

extension Authorization {
    /// The bearer's generation, -1 for anything else.
    var generation: Int {
        if case .bearer(_, let generation) = self { return generation }
        return -1
    }
}

/// An app registered in another region sends to that region's host: its own `endpoint` over the block's.
final class HuaweiRegionTests: XCTestCase {
    func testAnAppsOwnEndpointIsWhereItsLanesSend() {
        let settings = HuaweiSettings(endpoint: "https://push-api.cloud.huawei.com")
        let home = HuaweiApp(topic: "a")
        let abroad = HuaweiApp(topic: "b", endpoint: "https://push-api.example-region.test")
        XCTAssertEqual(HuaweiLaneSettings.transportSettings(for: home, settings: settings, rateLimit: .unlimited).baseURL,
                       "https://push-api.cloud.huawei.com")
        XCTAssertEqual(HuaweiLaneSettings.transportSettings(for: abroad, settings: settings, rateLimit: .unlimited).baseURL,
                       "https://push-api.example-region.test")
    }
}
