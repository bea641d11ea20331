import AndroidPushKit
import ProviderKit
import PushCore

/// What one Honor answer means for each token of its request. Honor publishes no code table; every sender read
/// tests the body's `code` for 200 and treats the rest as HTTP-like. So, the most conservative reading (a dead
/// token is only one Honor names dead; anything unclear is retried, never dropped):
///
/// | answer | decision |
/// |---|---|
/// | HTTP 429 or 503, code 429 | retry (never before `Retry-After`), over the rate: the app's rate is lowered for a while |
/// | code 200 | delivered, except `expireTokens` (feedback `Unregistered`) and `failTokens` (retried: Honor says no why) |
/// | every token expired while the app delivered nothing for 10 minutes | `AllTokensRefusedRule` (the service applies it) |
/// | code 401; HTTP 401 without a code | renew the access token and send again, no attempt spent |
/// | code 403 | the app pauses (a right it lacks; no retry of a message fixes it) |
/// | code 5xx; HTTP 5xx without a code | retry with backoff |
/// | any other code | dead letter: the code, and `message` as detail |
/// | no code: other 4xx | the app pauses: not Honor answering (a wrong endpoint, a proxy) |
/// | no code: 200 | retry: an answer that says nothing cannot be taken as delivered |
enum HonorResponseClassifier {
    struct Verdict {
        var answer: ServiceAnswer
        /// The answer shows Honor took the access token.
        var credentialAccepted = false
    }

    static func classify(status: Int, body: [UInt8], count: Int, tokenAt: (Int) -> String, nowMillis: Int64,
                         retryAfter: String? = nil) -> Verdict {
        let parsed = HonorAnswerBody(body)
        let reason = parsed.code ?? "HTTP\(status)"
        if status == 503 || status == 429 || parsed.code == "429" {
            return Verdict(answer: ServiceAnswer(.retry(reason: reason, notBeforeMillis: RetryAfter.millis(retryAfter), detail: parsed.message),
                                                 reason: reason, overRate: true))
        }
        guard let code = parsed.code else {
            return Verdict(answer: UncodedAnswer.classify(status: status, vendor: "Honor", answer: "an Honor answer", code: "an Honor code",
                                                          retryAfter: retryAfter))
        }
        switch code {
        case "200":
            return Verdict(answer: perToken(parsed, count: count, tokenAt: tokenAt, nowMillis: nowMillis), credentialAccepted: true)
        case "401":
            return Verdict(answer: ServiceAnswer(.renewAndResend(reason: code), reason: code))
        case "403":
            return Verdict(answer: ServiceAnswer(.credentialRefused(reason: code), reason: code), credentialAccepted: true)
        default:
            if let number = Int(code), (500..<600).contains(number) {
                return Verdict(answer: ServiceAnswer(.retry(reason: code, detail: parsed.message), reason: code))
            }
            return Verdict(answer: ServiceAnswer(.deadLetter(reason: code, detail: parsed.message), reason: code), credentialAccepted: true)
        }
    }

    /// Code 200: each listed token by its list; every other token delivered.
    static func perToken(_ parsed: HonorAnswerBody, count: Int, tokenAt: (Int) -> String, nowMillis: Int64) -> ServiceAnswer {
        var byToken: [String: ServiceDecision] = [:]
        for token in parsed.expireTokens { byToken[token] = .feedback(reason: "Unregistered", timestampMillis: nowMillis) }
        for token in parsed.failTokens where byToken[token] == nil {
            byToken[token] = .retry(reason: "failTokens", detail: "Honor listed the token as failed")
        }
        var exceptions: [(position: Int, decision: ServiceDecision)] = []
        if !byToken.isEmpty {
            for position in 0..<max(0, count) {
                if let decision = byToken[tokenAt(position)] { exceptions.append((position, decision)) }
            }
        }
        return ServiceAnswer(.delivered, reason: "200", exceptions: exceptions)
    }
}
