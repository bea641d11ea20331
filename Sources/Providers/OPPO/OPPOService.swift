import AndroidPushKit
import Logging
import ProviderKit
import PushCore

/// OPPO Push as the scheduler sees it: one token a `unicast`, 2 to 1,000 a `unicast_batch` (one message object per
/// token, each answered with its own code), forms with the day's auth token in the body (OPPO reads it there, not
/// from a header), each token's outcome from the answer (`OPPOResponseClassifier`).
///
/// One per lane; what the app's lanes share is passed in: the auth token's cache and the app's record of
/// deliveries.
public final class OPPOService: PushService {
    public static let unicastPath = "/server/v1/message/notification/unicast"
    public static let batchPath = "/server/v1/message/notification/unicast_batch"

    public let name = "OPPO"
    public let metrics: ServiceMetrics
    public let batchLimit = 1000
    public let app: OPPOApp
    private var credential: VendorCredential
    private let deliveries: AppDeliveryRecord
    private let quotaDay: QuotaDay
    private let clock: any TransportClock
    private let logger: Logger?
    /// The auth token of the pass of requests being started (`authorization()` is asked once per pass, before the
    /// pass's bodies are made): OPPO takes it in each form.
    private var passToken = ""

    public init(app: OPPOApp, tokens: AccessTokenCache, quotaDay: QuotaDay, deliveries: AppDeliveryRecord, metrics: ServiceMetrics,
                clock: any TransportClock = SystemTransportClock(), logger: Logger? = nil) {
        self.app = app
        credential = VendorCredential(tokens: tokens, vendor: "OPPO", check: "app_key, the master secret and this host's clock")
        self.quotaDay = quotaDay
        self.deliveries = deliveries
        self.metrics = metrics
        self.clock = clock
        self.logger = logger
    }

    public func authorization() -> Authorization {
        let authorization = credential.authorization()
        if case .bearer(let token, _) = authorization { passToken = token }
        return authorization
    }

    public func path(for job: JobContext, tokens: RequestTokens) -> (fixed: String, suffix: String) {
        (tokens.count == 1 ? Self.unicastPath : Self.batchPath, "")
    }

    /// No authorization header: the token is in the form.
    public func headerFields(for job: JobContext, bearer: String?) -> [(name: String, value: String)] {
        [("content-type", "application/x-www-form-urlencoded;charset=UTF-8")]
    }

    public func body(for job: JobContext, tokens: RequestTokens) -> RequestBody {
        let names = tokens.names(in: job.job)
        let headers = job.job.headers
        let ttl = OPPORequest.ttl.seconds(expiration: headers.expiration, nowSeconds: headers.expiresAtATime ? clock.wallSeconds() : 0)
        let item = VendorJobBody.body(for: job, ttl: ttl, vendorKey: "oppo") { payload, ttl in
            let chosen = app.messageClass(job.messageClass)
            return OPPORequest.ItemBody(OPPORequest.item(payload, category: chosen.category, notifyLevel: chosen.notifyLevel,
                                                         channelID: chosen.channelID, ttlSeconds: ttl, collapseID: headers.collapseID,
                                                         messageID: job.job.firstSourceID))
        }
        return .bytes(OPPORequest.form(item: item, tokens: names, authToken: passToken))
    }

    public func classify(status: Int, body: [UInt8], retryAfter: String?, job: JobContext, tokens: RequestTokens) -> ServiceAnswer {
        let now = clock.wallMillis()
        let verdict = OPPOResponseClassifier.classify(status: status, body: body, count: tokens.count,
                                                      tokenAt: { job.job.tokens[tokens.token(at: $0)] }, nowMillis: now,
                                                      quotaDay: quotaDay, retryAfter: retryAfter)
        let answer = credential.answer(verdict.answer, credentialAccepted: verdict.credentialAccepted)
        // A rejected token says nothing of the tokens: the refusal rule counts answers about them only.
        if case .renewAndResend = verdict.answer.decision { return answer }
        return AllTokensRefusedRule.apply(answer, count: tokens.count, record: deliveries, nowMillis: now, service: name)
    }

    public func renew(generation: Int) { credential.renew(generation: generation, app: app.topic, logger: logger) }
}
