import AndroidPushKit
import Logging
import ProviderKit
import PushCore

/// vivo Push as the scheduler sees it: one token a `/message/send`; 2 to 1,000 a `/message/pushToList` naming the
/// job's message saved once before (`prepare`: `saveListPayload`, a blocking call on the lane's own thread, its
/// `taskId` kept with the job); the auth token in the `authToken` header; each token's outcome from the answer
/// (`VivoResponseClassifier`).
///
/// One per lane; what the app's lanes share is passed in: the auth token's cache and the app's record of
/// deliveries. `saveEndpoint` makes the save call (the app's host + `/message/saveListPayload`).
public final class VivoService: PushService {
    public static let sendPath = "/message/send"
    public static let listPath = "/message/pushToList"
    public static let savePath = "/message/saveListPayload"

    public let name = "vivo"
    public let metrics: ServiceMetrics
    public let batchLimit = 1000
    public let app: VivoApp
    private var credential: VendorCredential
    private let saveEndpoint: TokenEndpoint
    private let deliveries: AppDeliveryRecord
    private let quotaDay: QuotaDay
    private let clock: any TransportClock
    private let logger: Logger?
    /// The auth token of the pass being started, for the save call.
    private var passToken = ""

    public init(app: VivoApp, tokens: AccessTokenCache, saveEndpoint: TokenEndpoint, quotaDay: QuotaDay, deliveries: AppDeliveryRecord,
                metrics: ServiceMetrics, clock: any TransportClock = SystemTransportClock(), logger: Logger? = nil) {
        self.app = app
        credential = VendorCredential(tokens: tokens, vendor: "vivo", check: "app_id, app_key, the app secret and this host's clock")
        self.saveEndpoint = saveEndpoint
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
        (tokens.count == 1 ? Self.sendPath : Self.listPath, "")
    }

    public func headerFields(for job: JobContext, bearer: String?) -> [(name: String, value: String)] {
        var fields: [(name: String, value: String)] = [("content-type", "application/json;charset=UTF-8")]
        if let bearer { fields.append(("authtoken", bearer)) }
        return fields
    }

    /// A list push needs its message saved first, once per job (again only when the ttl changed): a failed save
    /// settles the request unsent, by what vivo answered (a spent list quota holds the class; an auth result renews).
    public func prepare(for job: JobContext, tokens: RequestTokens) -> ServiceAnswer? {
        guard tokens.count > 1 else { return nil }
        let state = jobState(job)
        guard state.taskID == nil else { return nil }
        let body = VivoRequest.saveListPayload(state.message, requestID: VivoRequest.requestID(messageID: job.job.firstSourceID, tokens: []))
        switch saveEndpoint.post(body: String(decoding: body, as: UTF8.self), contentType: "application/json;charset=UTF-8",
                                 headers: ["authToken: \(passToken)"]) {
        case .failure(let reason):
            return ServiceAnswer(.retry(reason: "SaveListPayload", detail: reason.description), reason: "SaveListPayload")
        case .success(let answer):
            let parsed = VivoAnswer(answer.body)
            if parsed.result == 0, let taskID = parsed.taskID, !taskID.isEmpty {
                state.taskID = taskID
                return nil
            }
            return classify(status: answer.status, body: answer.body, retryAfter: nil, job: job, tokens: tokens)
        }
    }

    public func body(for job: JobContext, tokens: RequestTokens) -> RequestBody {
        let names = tokens.names(in: job.job)
        let state = jobState(job)
        let requestID = VivoRequest.requestID(messageID: job.job.firstSourceID, tokens: names)
        if names.count == 1 { return .bytes(VivoRequest.send(state.message, token: names[0], requestID: requestID)) }
        return .bytes(VivoRequest.pushToList(app: app, tokens: names, taskID: state.taskID ?? "", requestID: requestID))
    }

    public func classify(status: Int, body: [UInt8], retryAfter: String?, job: JobContext, tokens: RequestTokens) -> ServiceAnswer {
        let now = clock.wallMillis()
        let verdict = VivoResponseClassifier.classify(status: status, body: body, count: tokens.count,
                                                      tokenAt: { job.job.tokens[tokens.token(at: $0)] }, nowMillis: now,
                                                      quotaDay: quotaDay, retryAfter: retryAfter)
        let answer = credential.answer(verdict.answer, credentialAccepted: verdict.credentialAccepted)
        // A rejected token says nothing of the tokens: the refusal rule counts answers about them only.
        if case .renewAndResend = verdict.answer.decision { return answer }
        return AllTokensRefusedRule.apply(answer, count: tokens.count, record: deliveries, nowMillis: now, service: name)
    }

    public func renew(generation: Int) { credential.renew(generation: generation, app: app.topic, logger: logger) }

    /// The job's message (made once, and again when the ttl changed) and the task id its saved list body got.
    private func jobState(_ job: JobContext) -> JobState {
        let headers = job.job.headers
        let ttl = VivoRequest.ttl.seconds(expiration: headers.expiration, nowSeconds: headers.expiresAtATime ? clock.wallSeconds() : 0)
        return VendorJobBody.body(for: job, ttl: ttl, vendorKey: "vivo") { payload, ttl in
            let chosen = app.messageClass(job.messageClass)
            return JobState(VivoRequest.message(payload, app: app, classification: chosen.classification, category: chosen.category,
                                                ttlSeconds: ttl, collapseID: headers.collapseID, messageID: job.job.firstSourceID))
        }
    }

    final class JobState {
        let message: JSONValue
        var taskID: String?
        init(_ message: JSONValue) { self.message = message }
    }
}
