import ProviderKit
import PushCore

/// APNs as the scheduler sees it (docs/transport.md): `POST /3/device/<token>` with the job's payload as is,
/// the `apns-*` headers, a provider token (JWT) or a client certificate, and Apple's answers classified by
/// `APNsResponseClassifier`.
public final class APNsService: PushService {
    public let name = "APNs"
    public let metrics = ServiceMetrics.of(.apns)
    /// The JWT of a token-authenticated app; nil with a client certificate.
    private let provider: ProviderToken?

    public init(provider: ProviderToken?) {
        self.provider = provider
    }

    public func authorization() -> Authorization {
        guard let provider else { return .none }
        do {
            let token = try provider.current()
            return .bearer(token.bearer, generation: token.generation)
        } catch {
            // A key that cannot sign is the app's problem like a refused one: pause, dead-letter nothing.
            return .refused(reason: "ProviderTokenUnavailable: \(error)")
        }
    }

    public func path(for job: JobContext, tokens: RequestTokens) -> (fixed: String, suffix: String) {
        ("/3/device/", job.job.tokens[tokens.first])
    }

    public func headerFields(for job: JobContext, bearer: String?) -> [(name: String, value: String)] {
        let headers = job.job.headers
        var fields: [(name: String, value: String)] = [
            ("apns-topic", headers.topic),
            ("apns-push-type", headers.pushType),
            ("apns-priority", String(headers.priority)),
            ("content-type", "application/json"),
        ]
        // No expiration given: no header, so Apple stores the push for an offline device (its default).
        if let expiration = headers.expiration { fields.append(("apns-expiration", String(expiration))) }
        if let collapse = headers.collapseID { fields.append(("apns-collapse-id", collapse)) }
        if let bearer { fields.append(("authorization", "bearer \(bearer)")) }
        return fields
    }

    public func body(for job: JobContext, tokens: RequestTokens) -> RequestBody { .payload }

    public func classify(status: Int, body: [UInt8], retryAfter: String?, job: JobContext, tokens: RequestTokens) -> ServiceAnswer {
        let decision = decide(status: status, body: body)
        return ServiceAnswer(decision, reason: decision.reason)
    }

    private func decide(status: Int, body: [UInt8]) -> ServiceDecision {
        switch APNsResponseClassifier.classify(status: status, body: body) {
        case .delivered:
            return .delivered
        case .feedback(let reason, let timestamp):
            return .feedback(reason: reason, timestampMillis: timestamp)
        case .deadLetter(let reason):
            return .deadLetter(reason: reason)
        case .renewTokenAndRetry(let reason):
            return .renewAndRetry(reason: reason)
        case .retry(let reason):
            return APNsResponseClassifier.credentialReasons.contains(reason) ? .credentialRefused(reason: reason) : .retry(reason: reason)
        }
    }

    public func renew(generation: Int) {
        // Renewal respects the 20-minute rule inside ProviderToken; if refused, the retry goes with the old one.
        _ = try? provider?.expired(generation: generation)
    }
}
