import ProviderKit
import PushCore

/// FCM HTTP v1 as the scheduler sees it (docs/fcm.md): `POST /v1/projects/<project>/messages:send` with
/// `{"message":{<payload>,"token":"<token>"}}`, a Bearer access token shared by every request of the service
/// account (`AccessTokenCache`), and FCM's answers classified by `FCMResponseClassifier`.
final class FCMService: PushService {
    let name = "FCM"
    let metrics = ServiceMetrics.of(.fcm)
    private let tokens: AccessTokenCache
    private let sendPath: String

    init(projectID: String, tokens: AccessTokenCache) {
        self.tokens = tokens
        sendPath = "/v1/projects/\(projectID)/messages:send"
    }

    func authorization() -> Authorization {
        switch tokens.state {
        case .ready(let token): return .bearer(token.bearer.value, generation: token.generation)
        case .unavailable(let reason): return .wait(reason: reason)
        case .refused(let reason): return .refused(reason: "AccessTokenRefused: \(reason)")
        }
    }

    func path(for job: JobContext, tokens: RequestTokens) -> (fixed: String, suffix: String) { (sendPath, "") }

    func headerFields(for job: JobContext, bearer: String?) -> [(name: String, value: String)] {
        var fields: [(name: String, value: String)] = [("content-type", "application/json")]
        if let bearer { fields.append(("authorization", "Bearer \(bearer)")) }
        return fields
    }

    func body(for job: JobContext, tokens: RequestTokens) -> RequestBody {
        let token = job.job.tokens[tokens.first]
        if let cached = job.serviceCache as? CachedBody { return .bytes(cached.body.body(token: token)) }
        if !job.job.headers.expiresAtATime {
            // A job of one token (most chat pushes) makes its one body at once: a prefix made, kept and freed
            // for a single request cost an allocation and a copy more (and a retry makes the body again).
            if job.job.tokens.count == 1 {
                return .bytes(FCMRequestBody.body(payload: job.job.payload, expiration: nil, nowSeconds: 0, token: token))
            }
            // No ttl to count down: the body up to the token is the same for every token and every retry.
            let made = FCMRequestBody(payload: job.job.payload, expiration: nil, nowSeconds: 0)
            job.serviceCache = CachedBody(made)
            return .bytes(made.body(token: token))
        }
        // The ttl is what is left at this send, not what was left when the job was made.
        return .bytes(FCMRequestBody.body(payload: job.job.payload, expiration: job.job.headers.expiration,
                                          nowSeconds: WallClock.nowSeconds(), token: token))
    }

    func classify(status: Int, body: [UInt8], retryAfter: String?, job: JobContext, tokens: RequestTokens) -> ServiceAnswer {
        if status == 200 { return ServiceAnswer(.delivered, reason: "") }
        return ServiceAnswer(FCMResponseClassifier.classify(status: status, body: body, retryAfter: retryAfter, nowMillis: WallClock.nowMillis()),
                             reason: FCMResponseClassifier.code(status: status, body: body))
    }

    func renew(generation: Int) {
        tokens.rejected(generation: generation)
    }

    private final class CachedBody {
        let body: FCMRequestBody
        init(_ body: FCMRequestBody) { self.body = body }
    }
}
