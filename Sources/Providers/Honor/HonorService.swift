import AndroidPushKit
import Logging
import ProviderKit
import PushCore

/// Honor Push as the scheduler sees it: `POST /api/v1/<appId>/sendMessage` with an OAuth access token and the
/// `timestamp` header Honor's guide shows (epoch milliseconds; the headers are made again every 10 seconds, so a
/// retry never carries an old time), up to 1,000 tokens a request (Honor states no limit: that of the API Honor's
/// grew out of is taken), each token's outcome read from the answer (`HonorResponseClassifier`).
///
/// One per lane (the scheduler uses a service from its own thread only); what the app's lanes share is passed in:
/// the access token's cache, and the app's record of deliveries (`AllTokensRefusedRule`).
public final class HonorService: PushService {
    public let name = "Honor"
    public let metrics: ServiceMetrics
    public let batchLimit = 1000
    public let headerLifetimeMillis: Int64? = 10_000
    public let app: HonorApp
    private var credential: VendorCredential
    private let deliveries: AppDeliveryRecord
    private let clock: any TransportClock
    private let logger: Logger?
    private let sendPath: String

    public init(app: HonorApp, tokens: AccessTokenCache, deliveries: AppDeliveryRecord, metrics: ServiceMetrics,
                clock: any TransportClock = SystemTransportClock(), logger: Logger? = nil) {
        self.app = app
        credential = VendorCredential(tokens: tokens, vendor: "Honor", check: "app_id, client_id and the client secret")
        self.deliveries = deliveries
        self.metrics = metrics
        self.clock = clock
        self.logger = logger
        // The id comes from the configuration: percent-encoded as one path segment, so a slash or a `?` in it cannot
        // send the app's messages elsewhere.
        sendPath = "/api/v1/\(TokenEndpoint.formEncode(app.appID))/sendMessage"
    }

    public func authorization() -> Authorization { credential.authorization() }

    public func path(for job: JobContext, tokens: RequestTokens) -> (fixed: String, suffix: String) { (sendPath, "") }

    public func headerFields(for job: JobContext, bearer: String?) -> [(name: String, value: String)] {
        var fields: [(name: String, value: String)] = [("content-type", "application/json;charset=UTF-8"),
                                                        ("timestamp", String(clock.wallMillis()))]
        if let bearer { fields.append(("authorization", "Bearer \(bearer)")) }
        return fields
    }

    public func body(for job: JobContext, tokens: RequestTokens) -> RequestBody {
        let names = tokens.names(in: job.job)
        let headers = job.job.headers
        let ttl = HonorRequest.ttl.seconds(expiration: headers.expiration, nowSeconds: headers.expiresAtATime ? clock.wallSeconds() : 0)
        let body = VendorJobBody.body(for: job, ttl: ttl, vendorKey: "honor") { payload, ttl in
            TokenListBody(document: HonorRequest.document(payload, importance: app.importance(for: job.messageClass), ttlSeconds: ttl,
                                                          collapseID: headers.collapseID, messageID: job.job.firstSourceID),
                          path: [])
        }
        return .bytes(body.body(tokens: names))
    }

    public func classify(status: Int, body: [UInt8], retryAfter: String?, job: JobContext, tokens: RequestTokens) -> ServiceAnswer {
        let now = clock.wallMillis()
        let verdict = HonorResponseClassifier.classify(
            status: status, body: body, count: tokens.count, tokenAt: { job.job.tokens[tokens.token(at: $0)] }, nowMillis: now,
            retryAfter: retryAfter)
        let answer = credential.answer(verdict.answer, credentialAccepted: verdict.credentialAccepted)
        // A rejected token says nothing of the tokens: the refusal rule counts answers about them only.
        if case .renewAndResend = verdict.answer.decision { return answer }
        return AllTokensRefusedRule.apply(answer, count: tokens.count, record: deliveries, nowMillis: now, service: name)
    }

    public func renew(generation: Int) { credential.renew(generation: generation, app: app.topic, logger: logger) }
}
