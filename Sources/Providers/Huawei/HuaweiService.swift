import AndroidPushKit
import Logging
import ProviderKit
import PushCore

/// Huawei Push Kit as the scheduler sees it, one class for both APIs (they differ in path, body, header and
/// credential, not in what an answer means): v1 `POST /v1/<app_id>/messages:send` with an OAuth access token (Android,
/// HMS Core), v3 `POST /v3/<project_id>/messages:send` with a self-signed JWT and `push-type: 0` (HarmonyOS 5+).
/// Up to 1,000 tokens a request; each token's outcome is read from the answer (`HuaweiResponseClassifier`).
///
/// One per lane (the scheduler uses a service from its own thread only); what the app's lanes share is passed in:
/// the credential, and the app's record of deliveries (`AllTokensRefusedRule`).
public final class HuaweiService: PushService {
    public let name = "Huawei"
    public let metrics: ServiceMetrics
    /// Huawei's list limit: `token` holds 1..1000 (80300010 past it).
    public let batchLimit = 1000
    public let app: HuaweiApp
    public let credential: HuaweiCredential
    private let deliveries: AppDeliveryRecord
    private let clock: any TransportClock
    private let logger: Logger?
    private let sendPath: String
    private var rejections = RenewalRejections()
    /// The code of the last credential rejection, for the refusal's reason.
    private var lastRejection = ""

    /// - Parameters:
    ///   - deliveries: the app's, shared by all its lanes.
    ///   - metrics: the service's series (`push_provider_*{provider="huawei"}`; tests may pass another).
    ///   - clock: the lane's (`TransportSettings.clock`): the ttl's now, feedback timestamps, the refusal rule's window.
    public init(app: HuaweiApp, credential: HuaweiCredential, deliveries: AppDeliveryRecord, metrics: ServiceMetrics,
                clock: any TransportClock = SystemTransportClock(), logger: Logger? = nil) {
        self.app = app
        self.credential = credential
        self.deliveries = deliveries
        self.metrics = metrics
        self.clock = clock
        self.logger = logger
        switch credential {
        case .clientCredentials: sendPath = HuaweiSendPath.v1(appID: app.appID)
        case .serviceAccount(let signer): sendPath = HuaweiSendPath.v3(projectID: signer.projectID)
        }
    }

    /// Times a renewed credential was rejected again at once (the app then pauses).
    var renewedCredentialRefusals: Int { rejections.refusals }

    public func authorization() -> Authorization {
        if rejections.takeOwedPause() {
            return .refused(reason: "CredentialRejected: Huawei rejected the app's renewed credential at once (\(lastRejection)); "
                + (credential.api == .v1 ? "check app_id and the client secret" : "check the key file's project_id, key_id and sub_account"))
        }
        return credential.authorization()
    }

    public func path(for job: JobContext, tokens: RequestTokens) -> (fixed: String, suffix: String) { (sendPath, "") }

    public func headerFields(for job: JobContext, bearer: String?) -> [(name: String, value: String)] {
        var fields: [(name: String, value: String)]
        switch credential.api {
        case .v1: fields = [("content-type", "application/json;charset=UTF-8")]
        case .v3: fields = [("content-type", "application/json"), ("push-type", HuaweiV3Request.pushType)]
        }
        if let bearer { fields.append(("authorization", "Bearer \(bearer)")) }
        return fields
    }

    public func body(for job: JobContext, tokens: RequestTokens) -> RequestBody {
        let names = tokens.names(in: job.job)
        return .bytes(jobBody(job).body(tokens: names))
    }

    public func classify(status: Int, body: [UInt8], retryAfter: String?, job: JobContext, tokens: RequestTokens) -> ServiceAnswer {
        let now = clock.wallMillis()
        let verdict = HuaweiResponseClassifier.classify(
            status: status, body: body, count: tokens.count, tokenAt: { job.job.tokens[tokens.token(at: $0)] }, nowMillis: now,
            retryAfter: retryAfter)
        if verdict.credentialAccepted { rejections.accepted() }
        guard case .renewAndResend(let code) = verdict.answer.decision else {
            return AllTokensRefusedRule.apply(verdict.answer, count: tokens.count, record: deliveries, nowMillis: now, service: name)
        }
        lastRejection = code
        guard rejections.isRefusing else { return verdict.answer }
        // The pause's probe was rejected too: the pause goes on (and doubles) rather than spending the free resends
        // and then attempts, and the next probe carries a new credential.
        credential.renewCurrent()
        return ServiceAnswer(.credentialRefused(reason: code), reason: verdict.answer.reason)
    }

    public func renew(generation: Int) {
        if rejections.rejected(generation: generation) {
            logger?.error("Huawei rejected this app's credential again right after renewing it: the app pauses until a renewed one is accepted", metadata: [
                "app": "\(app.topic)", "code": "\(lastRejection)", "generation": "\(generation)",
            ])
        }
        credential.renew(generation: generation)
    }

    /// The job's body up to its tokens, made on its first request and kept with the job (`VendorJobBody`); made
    /// again only when the ttl (the seconds left until its expiration) has changed since.
    private func jobBody(_ job: JobContext) -> TokenListBody {
        let headers = job.job.headers
        let ttl = HuaweiTTL.seconds(expiration: headers.expiration, nowSeconds: headers.expiresAtATime ? clock.wallSeconds() : 0)
        return VendorJobBody.body(for: job, ttl: ttl, vendorKey: "huawei") { payload, ttl in
            makeBody(payload, ttl: ttl, collapseID: headers.collapseID, category: app.category(for: job.messageClass),
                     messageID: job.job.firstSourceID)
        }
    }

    private func makeBody(_ payload: AndroidPayload, ttl: Int64?, collapseID: String?, category: String, messageID: String) -> TokenListBody {
        let tag = app.takesReceipts ? HuaweiReceiptTag.of(messageID: messageID) : nil
        switch credential.api {
        case .v1:
            let document = HuaweiV1Request.document(payload, category: category, ttlSeconds: ttl, collapseID: collapseID, messageID: messageID,
                                                    receiptTag: tag)
            return TokenListBody(document: document, path: ["message"])
        case .v3:
            let document = HuaweiV3Request.document(payload, category: category, ttlSeconds: ttl, collapseID: collapseID, messageID: messageID,
                                                    receiptTag: tag)
            return TokenListBody(document: document, path: ["target"])
        }
    }
}
