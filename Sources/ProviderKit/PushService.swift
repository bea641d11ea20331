import PushCore

/// What the scheduler needs from one push service (any provider's) and nothing more: how a request looks, which
/// credential it carries, and what an answer means. The scheduler keeps every policy (queues, retries and
/// backoff, deadlines, the ownership fence, the concurrency limiter, the credential pause, metrics batching)
/// and knows no service by name. Used from one scheduler's thread only.
public protocol PushService: AnyObject {
    /// The service's name as its module gives it: for log lines.
    var name: String { get }
    /// The service's metric series (`push_provider_*{provider}`).
    var metrics: ServiceMetrics { get }
    /// The credential for the requests of one start pass, read once per pass.
    func authorization() -> Authorization
    /// The most tokens one request may carry: 1 for a service with a request per device, the service's list limit
    /// for one that takes a list (1,000 for the China vendors). The scheduler sends a job's ready tokens in
    /// batches up to it; retries, attempts, the fence, expiry and outcomes stay per token.
    var batchLimit: Int { get }
    /// `:path` for a request: a fixed part and the part that varies per token ("" when the tokens are in the body).
    func path(for job: JobContext, tokens: RequestTokens) -> (fixed: String, suffix: String)
    /// The request's header fields besides the pseudo-headers, the same for every request of `job` (within
    /// `headerLifetimeMillis`).
    func headerFields(for job: JobContext, bearer: String?) -> [(name: String, value: String)]
    /// How long a request's headers stay good, for a service whose headers carry the time (a vendor's
    /// `timestamp` header): the drivers build them again once they are older; nil (most services): as long as the
    /// credential's generation.
    var headerLifetimeMillis: Int64? { get }
    /// The request body for `tokens` (for a service that sends the job's payload as is: that payload, shared by its
    /// tokens).
    func body(for job: JobContext, tokens: RequestTokens) -> RequestBody
    /// What an HTTP answer means for the request's tokens. `retryAfter`: the answer's `retry-after` header.
    func classify(status: Int, body: [UInt8], retryAfter: String?, job: JobContext, tokens: RequestTokens) -> ServiceAnswer
    /// A step a request needs before it is sent, if any: a vendor's list body saved first (the list push then names
    /// the id the save answered). Runs on the lane's thread just before the request would go, and may block for
    /// one call of its own (never on Swift's cooperative pool). nil: send it. An answer: the request is not sent,
    /// and its tokens are settled by that answer as if the service had given it (a retry, a spent quota, a
    /// credential to renew).
    func prepare(for job: JobContext, tokens: RequestTokens) -> ServiceAnswer?
    /// The server refused the credential of `generation` as expired or invalid: renew it (within the
    /// service's own rules: a minimum age between JWT renewals, an OAuth token's one renewal a second).
    func renew(generation: Int)
}

extension PushService {
    public var batchLimit: Int { 1 }
    public var headerLifetimeMillis: Int64? { nil }
    public func prepare(for job: JobContext, tokens: RequestTokens) -> ServiceAnswer? { nil }
}

/// A request's body.
public enum RequestBody {
    /// The job's payload as it is, shared by every request of the job (a service that sends it as is): a driver may
    /// read it in place.
    case payload
    /// Bytes made for this request (a message with its token, a vendor's list of tokens).
    case bytes([UInt8])
}

/// What one answer means for the tokens of its request.
public struct ServiceAnswer {
    /// The outcome of every token of the request, except those in `exceptions`.
    public var decision: ServiceDecision
    /// The answer's own reason for the responses metric (the service's error code, where the decision's reason is the
    /// outcome's: `UNREGISTERED` is the feedback reason `Unregistered`).
    public var reason: String
    /// The tokens the answer names apart (a batch's partial failures: a vendor's list of dead or malformed
    /// tokens inside a success), by position in the request's `RequestTokens`, each with its own outcome.
    /// Empty for a request of one token.
    public var exceptions: [(position: Int, decision: ServiceDecision)]
    /// The service says the app sends faster than its rate (a vendor's over-rate code; vendors answer so, with no flow
    /// control): the app's rate is lowered for a while (`AppRateLimit.overRate`).
    public var overRate: Bool

    public init(_ decision: ServiceDecision, reason: String, exceptions: [(position: Int, decision: ServiceDecision)] = [],
                overRate: Bool = false) {
        self.decision = decision
        self.reason = reason
        self.exceptions = exceptions
        self.overRate = overRate
    }
}

/// The credential for a pass of requests.
public enum Authorization {
    /// None needed (a client certificate authenticates the connection).
    case none
    /// `authorization: bearer …`, and its generation (headers built for an older one are rebuilt).
    case bearer(String, generation: Int)
    /// None can be had just now (an access token being fetched, its endpoint down): requests wait, no
    /// attempt spent, readiness says why.
    case wait(reason: String)
    /// The credential is refused (a key that cannot sign, a grant refused): the app pauses.
    case refused(reason: String)
}

/// What to do with one answer, decided by the service.
public enum ServiceDecision: Hashable {
    case delivered
    /// Tell the backend to stop using the token; not retried.
    case feedback(reason: String, timestampMillis: Int64)
    /// Permanent for this notification. `reason` is the service's code; `detail` its words, if any.
    case deadLetter(reason: String, detail: String? = nil)
    /// Transient: again after the retry backoff, never before `notBeforeMillis` from now; `holdService`: the
    /// whole service (project) waits that long too (a 429 for a whole project). `detail`: the service's words,
    /// kept for the dead letter if the attempts run out.
    case retry(reason: String, notBeforeMillis: Int64? = nil, holdService: Bool = false, detail: String? = nil)
    /// The credential is too old: renew it and retry, spending an attempt (an answer such as `ExpiredProviderToken`).
    case renewAndRetry(reason: String)
    /// The credential was rejected before the message was looked at: renew it and send again at once,
    /// spending no attempt (a 401 that says only that the bearer expired), as a request the server never processed.
    case renewAndResend(reason: String)
    /// The credential itself is refused; no retry fixes it: the app pauses (`CredentialPause`).
    case credentialRefused(reason: String)
    /// A value the configuration supplies is refused (a channel, a template, a category): every message of the app
    /// would meet the same refusal, so the app pauses as for a refused credential (parked, probed, alerted, in
    /// the status), not a dead letter per message. `reason` is the service's code; `detail` its words and the
    /// setting to check.
    case configurationRefused(reason: String, detail: String)
    /// The app's quota for the service's day is spent (a vendor's daily quota): its requests wait until
    /// `untilWallMillis` (the vendor's day rolls over), no attempt spent, holding nothing of any other app.
    case quotaSpent(reason: String, untilWallMillis: Int64)
}

extension ServiceDecision {
    public var reason: String {
        switch self {
        case .delivered: return ""
        case .feedback(let reason, _), .deadLetter(let reason, _), .retry(let reason, _, _, _), .renewAndRetry(let reason),
             .renewAndResend(let reason), .credentialRefused(let reason), .quotaSpent(let reason, _),
             .configurationRefused(let reason, _):
            return reason
        }
    }
}
