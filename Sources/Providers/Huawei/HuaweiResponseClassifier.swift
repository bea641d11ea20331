import ProviderKit
import PushCore

/// What one Push Kit answer means for each token of its request (docs/vendors.md, "Outcomes").
/// Huawei documents its codes and, apart, the HTTP statuses, not which goes with which: 200 with the code in the
/// body is usual, 400 and 401 are possible (unverified). So the body's `code` decides whatever the status; the
/// status alone decides only without a code (and 503, flow control, always).
///
/// | answer | decision |
/// |---|---|
/// | HTTP 503 (flow control), 429 | retry (never before its `Retry-After`), over the rate: the app's rate is lowered for a while |
/// | 80000000, 80100000 | delivered, except the tokens `msg` lists, each by its reason (`tokenDecision`) |
/// | 80300007 | each token by the lists; a token not listed: BadDeviceToken |
/// | every token refused while the app delivered nothing for 10 minutes | `AllTokensRefusedRule` (the service applies it) |
/// | 80200001, 80200003, 80200005; 401 without a code | renew the credential and send again, no attempt spent |
/// | 80300002, 80300013, 80300036, 80300037, 80600003 | the app pauses (permission, receipt, JWT, penalty, OAuth) |
/// | 81000001, 80100017, 80300029; 5xx without a known code | retry with backoff |
/// | any other code (80100001, 80100003, 80100004, 80100016, 80300008, …) | dead letter: the code, and `msg` as detail |
/// | no code: 404 and other 4xx | the app pauses: not Push Kit answering (a wrong endpoint, a proxy) |
/// | no code: 200 | retry: an answer that says nothing cannot be taken as delivered |
enum HuaweiResponseClassifier {
    /// The credential was rejected (expired, or not this app's): renewed and sent again.
    static let credentialRejectedCodes: Set<String> = ["80200001", "80200003", "80200005"]
    /// The app may not send (Push Kit off or a project mismatch, a wrong receipt setup, a JWT valid over a day, a
    /// penalty, OAuth refusing the client): no retry of a message fixes it.
    static let appRefusedCodes: Set<String> = ["80300002", "80300013", "80300036", "80300037", "80600003"]
    /// Huawei's internal error, the topic task limit, the test-message rate: again later.
    static let retryCodes: Set<String> = ["81000001", "80100017", "80300029"]
    /// Answers that list tokens.
    static let perTokenCodes: Set<String> = ["80000000", "80100000", "80300007"]
    static let allRefusedCode = "80300007"

    /// One answer, classified.
    struct Verdict {
        var answer: ServiceAnswer
        /// The answer shows Push Kit took the credential (it looked at the message or its tokens).
        var credentialAccepted = false
    }

    /// - Parameters:
    ///   - count: the request's tokens; `tokenAt` gives the one at a position (read only for answers that list).
    static func classify(status: Int, body: [UInt8], count: Int, tokenAt: (Int) -> String, nowMillis: Int64,
                         retryAfter: String? = nil) -> Verdict {
        let parsed = HuaweiAnswerBody(body)
        let reason = parsed.code ?? "HTTP\(status)"
        if status == 503 || status == 429 {
            // Never sooner than its `Retry-After` asks, where it gives one.
            return Verdict(answer: ServiceAnswer(.retry(reason: reason, notBeforeMillis: RetryAfter.millis(retryAfter), detail: parsed.message),
                                                 reason: reason, overRate: true))
        }
        guard let code = parsed.code else {
            return Verdict(answer: ServiceAnswer(withoutCode(status: status), reason: reason))
        }
        if perTokenCodes.contains(code) {
            return perToken(code: code, parsed: parsed, count: count, tokenAt: tokenAt, nowMillis: nowMillis)
        }
        let decision: ServiceDecision
        if credentialRejectedCodes.contains(code) {
            return Verdict(answer: ServiceAnswer(.renewAndResend(reason: code), reason: code))
        } else if appRefusedCodes.contains(code) {
            decision = .credentialRefused(reason: code)
        } else if retryCodes.contains(code) || status >= 500 {
            // A server error with a code this table does not know is taken as a server error.
            decision = .retry(reason: code, detail: parsed.message)
        } else {
            decision = .deadLetter(reason: code, detail: parsed.message)
        }
        return Verdict(answer: ServiceAnswer(decision, reason: code), credentialAccepted: !retryCodes.contains(code) && status < 500)
    }

    /// 80000000, 80100000, 80300007: each token's outcome from the lists.
    static func perToken(code: String, parsed: HuaweiAnswerBody, count: Int, tokenAt: (Int) -> String,
                         nowMillis: Int64) -> Verdict {
        let fallback: ServiceDecision = code == allRefusedCode
            ? .feedback(reason: "BadDeviceToken", timestampMillis: nowMillis) : .delivered
        var exceptions: [(position: Int, decision: ServiceDecision)] = []
        if !parsed.listed.isEmpty {
            // The first reason a token is listed under counts; every position of a token listed twice gets it.
            var byToken: [String: ServiceDecision] = [:]
            for entry in parsed.listed where byToken[entry.token] == nil {
                byToken[entry.token] = tokenDecision(reason: entry.reason, nowMillis: nowMillis)
            }
            for position in 0..<max(0, count) {
                guard let decision = byToken[tokenAt(position)] else { continue }
                if decision != fallback { exceptions.append((position, decision)) }
            }
        }
        return Verdict(answer: ServiceAnswer(fallback, reason: code, exceptions: exceptions), credentialAccepted: true)
    }

    /// What a token listed under `reason` gets.
    static func tokenDecision(reason: String, nowMillis: Int64) -> ServiceDecision {
        switch reason {
        case HuaweiAnswerBody.v1ListReason, "tokenFormatError":
            return .feedback(reason: "BadDeviceToken", timestampMillis: nowMillis)
        case "noRight", "tokenPlatformNotSupport":
            // Another project's token (or a device moved to HarmonyOS 5 without a new one), a third-party proxy's.
            return .feedback(reason: "Unregistered", timestampMillis: nowMillis)
        case "disableSendHuaweiMsgBecauseOfPenalty", "noPushTypeRight", "appinfoError":
            // The app's own standing (a penalty, a missing push-type right, an app not set up), told per token:
            // every token would get it, so the app pauses rather than dead-lettering its messages.
            return .credentialRefused(reason: reason)
        default:
            return .deadLetter(reason: reason, detail: "Huawei listed the token as \(reason)")
        }
    }

    /// An answer without a Huawei code.
    static func withoutCode(status: Int) -> ServiceDecision {
        switch status {
        case 401:
            return .renewAndResend(reason: "HTTP401")
        case 500...:
            return .retry(reason: "HTTP\(status)")
        case 400..<500:
            return .credentialRefused(reason: "NotHuawei: HTTP \(status) without a Push Kit answer")
        default:
            return .retry(reason: "HTTP\(status)", detail: "an answer without a Push Kit code")
        }
    }
}
