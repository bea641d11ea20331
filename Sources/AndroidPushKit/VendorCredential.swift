import Logging
import ProviderKit
import PushCore

/// A vendor app's bearer as one lane's service holds it: the app's shared token cache (OAuth, or a vendor's signed
/// auth call) and the rule that pauses an app whose renewed token is rejected again at once (`RenewalRejections`).
/// A service asks it for the pass's authorization, hands it each classified answer and each renewal. One per lane
/// (a service's thread).
public struct VendorCredential {
    public let tokens: AccessTokenCache
    private let vendor: String
    private let check: String
    private var rejections = RenewalRejections()
    private var lastRejection = ""

    /// - Parameters:
    ///   - vendor: the vendor's name, for the refusal's words.
    ///   - check: what to check when the renewed token is refused too ("app_id and the client secret").
    public init(tokens: AccessTokenCache, vendor: String, check: String) {
        self.tokens = tokens
        self.vendor = vendor
        self.check = check
    }

    /// The pass's authorization: the token, a wait while none can be had, a refusal (once) that starts the pause.
    public mutating func authorization() -> Authorization {
        if rejections.takeOwedPause() {
            return .refused(reason: "CredentialRejected: \(vendor) rejected the app's renewed token at once (\(lastRejection)); check \(check)")
        }
        switch tokens.state {
        case .ready(let token): return .bearer(token.bearer.value, generation: token.generation)
        case .unavailable(let reason): return .wait(reason: reason)
        case .refused(let reason): return .refused(reason: "AccessTokenRefused: \(reason)")
        }
    }

    /// What an answer means once the token's history is counted: a rejection while the app is paused for a rejected
    /// token answers the pause's probe (the pause goes on, and the next probe has a new token) instead of another
    /// resend. `credentialAccepted`: the answer shows the vendor took the token.
    public mutating func answer(_ answer: ServiceAnswer, credentialAccepted: Bool) -> ServiceAnswer {
        if credentialAccepted { rejections.accepted() }
        guard case .renewAndResend(let code) = answer.decision else { return answer }
        lastRejection = code
        guard rejections.isRefusing else { return answer }
        if let generation = tokens.state.token?.generation { tokens.rejected(generation: generation) }
        return ServiceAnswer(.credentialRefused(reason: code), reason: answer.reason)
    }

    /// The scheduler renews the token of `generation` after a rejection; a renewed one rejected again pauses the app.
    public mutating func renew(generation: Int, app: String, logger: Logger?) {
        if rejections.rejected(generation: generation) {
            logger?.error("\(vendor) rejected this app's token again right after renewing it: the app pauses until a renewed one is accepted",
                          metadata: ["app": "\(app)", "code": "\(lastRejection)", "generation": "\(generation)"])
        }
        tokens.rejected(generation: generation)
    }
}

/// An answer without the vendor's code (no body it can read), by its HTTP status alone: 401 a token to renew; 429 and
/// 503 over the rate; other 5xx a retry; other 4xx the app pauses (not the vendor answering: a wrong endpoint, a
/// proxy); a 2xx that says nothing a retry, never taken as delivered.
public enum UncodedAnswer {
    /// - Parameters:
    ///   - vendor: the vendor's name as a word (`NotAcme`); `answer` and `code` its words (`an Acme answer`,
    ///     `an Acme code`).
    public static func classify(status: Int, vendor: String, answer: String, code: String, retryAfter: String?) -> ServiceAnswer {
        let reason = "HTTP\(status)"
        switch status {
        case 401: return ServiceAnswer(.renewAndResend(reason: reason), reason: reason)
        case 429, 503:
            return ServiceAnswer(.retry(reason: reason, notBeforeMillis: RetryAfter.millis(retryAfter)), reason: reason, overRate: true)
        case 500...: return ServiceAnswer(.retry(reason: reason), reason: reason)
        case 400..<500:
            return ServiceAnswer(.credentialRefused(reason: "Not\(vendor): HTTP \(status) without \(answer)"), reason: reason)
        default: return ServiceAnswer(.retry(reason: reason, detail: "an answer without \(code)"), reason: reason)
        }
    }
}
