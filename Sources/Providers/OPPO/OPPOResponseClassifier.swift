import AndroidPushKit
import ProviderKit
import PushCore

/// What one OPPO answer means for each token of its request, by OPPO's code table:
///
/// | answer | decision |
/// |---|---|
/// | 0, `unicast` | delivered |
/// | 0, `unicast_batch` | each token by its item: no `errorCode` delivered, 10000 feedback `Unregistered`, another code that token's dead letter; a token without an item retried |
/// | 10000 (`unicast`) | feedback `Unregistered` |
/// | -2 (flow control), 13, 55 (call limits) | retry, over the rate: the app's rate is lowered for a while |
/// | -1, HTTP 5xx | retry |
/// | 11, 29 (auth token invalid or missing), 16, 19 (sign, timestamp) | renew the token and send again, no attempt spent; the same again at once pauses the app |
/// | 14, 15, 17, 18, 20-28, 30 (app key, method, version, encoding; blacklisted, denied, disabled, no push right) | the app pauses |
/// | 33, 34 (the day's messages or pictures spent) | the message's class waits until OPPO's day rolls over |
/// | 67 (category or notify_level refused) | the app pauses: a value the configuration supplies |
/// | any other code (12, 31, 32, 40, 41, 51, 59, …) | dead letter: the code, and `message` as detail |
/// | no code: 4xx | the app pauses: not OPPO answering (a wrong endpoint, a proxy) |
/// | no code: 200 | retry: an answer that says nothing cannot be taken as delivered |
enum OPPOResponseClassifier {
    struct Verdict {
        var answer: ServiceAnswer
        var credentialAccepted = false
    }

    static let renewCodes: Set<Int64> = [11, 29, 16, 19]
    static let appRefusedCodes: Set<Int64> = [14, 15, 17, 18, 20, 21, 22, 23, 24, 25, 26, 27, 28, 30]
    static let overRateCodes: Set<Int64> = [-2, 13, 55]
    static let quotaCodes: Set<Int64> = [33, 34]
    static let invalidRegistration: Int64 = 10000

    static func classify(status: Int, body: [UInt8], count: Int, tokenAt: (Int) -> String, nowMillis: Int64,
                         quotaDay: QuotaDay, retryAfter: String? = nil) -> Verdict {
        let parsed = OPPOAnswer(body)
        guard let code = parsed.code else {
            return Verdict(answer: UncodedAnswer.classify(status: status, vendor: "OPPO", answer: "an OPPO answer", code: "an OPPO code",
                                                          retryAfter: retryAfter))
        }
        let reason = String(code)
        if code == 0 {
            return Verdict(answer: count > 1 ? perToken(parsed, count: count, tokenAt: tokenAt, nowMillis: nowMillis)
                                             : ServiceAnswer(.delivered, reason: reason),
                           credentialAccepted: true)
        }
        if code == invalidRegistration {
            return Verdict(answer: ServiceAnswer(.feedback(reason: "Unregistered", timestampMillis: nowMillis), reason: reason), credentialAccepted: true)
        }
        if overRateCodes.contains(code) {
            return Verdict(answer: ServiceAnswer(.retry(reason: reason, notBeforeMillis: RetryAfter.millis(retryAfter), detail: parsed.message),
                                                 reason: reason, overRate: true))
        }
        if code == -1 || status >= 500 {
            return Verdict(answer: ServiceAnswer(.retry(reason: reason, detail: parsed.message), reason: reason))
        }
        if renewCodes.contains(code) {
            return Verdict(answer: ServiceAnswer(.renewAndResend(reason: reason), reason: reason))
        }
        let decision: ServiceDecision
        if appRefusedCodes.contains(code) {
            decision = .credentialRefused(reason: reason)
        } else if quotaCodes.contains(code) {
            decision = .quotaSpent(reason: reason, untilWallMillis: quotaDay.nextRollover(afterWallMillis: nowMillis))
        } else if code == 67 {
            decision = .configurationRefused(reason: reason, detail: (parsed.message ?? "category or notify_level refused")
                + "; check the app's category and notify_level in the oppo block")
        } else {
            decision = .deadLetter(reason: reason, detail: parsed.message)
        }
        return Verdict(answer: ServiceAnswer(decision, reason: reason), credentialAccepted: true)
    }

    /// `unicast_batch`: each token by its item.
    static func perToken(_ parsed: OPPOAnswer, count: Int, tokenAt: (Int) -> String, nowMillis: Int64) -> ServiceAnswer {
        var byToken: [String: ServiceDecision] = [:]
        for item in parsed.items where byToken[item.registrationID] == nil {
            switch item.errorCode {
            case nil, 0?: byToken[item.registrationID] = .delivered
            case invalidRegistration?: byToken[item.registrationID] = .feedback(reason: "Unregistered", timestampMillis: nowMillis)
            case let other?: byToken[item.registrationID] = .deadLetter(reason: String(other), detail: item.errorMessage)
            }
        }
        var exceptions: [(position: Int, decision: ServiceDecision)] = []
        for position in 0..<max(0, count) {
            // A token OPPO did not answer for: sent again (OPPO's app_message_id keeps a device from showing it twice).
            let decision = byToken[tokenAt(position)] ?? .retry(reason: "NotAnswered", detail: "OPPO's answer had no item for the token")
            if decision != .delivered { exceptions.append((position, decision)) }
        }
        return ServiceAnswer(.delivered, reason: "0", exceptions: exceptions)
    }
}
