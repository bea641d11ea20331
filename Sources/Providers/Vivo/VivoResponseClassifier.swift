import AndroidPushKit
import ProviderKit
import PushCore

/// What one vivo answer means for each token of its request:
///
/// | answer | decision |
/// |---|---|
/// | result 0 | delivered, except the tokens `invalidUser(s)` names: status 1, 2, 3 feedback `Unregistered`; 4 (not a test device) the app pauses |
/// | 10302 (regId invalid or expired) | feedback `Unregistered` |
/// | 10070, 10252, 10254 (the day's sends, list bodies or broadcasts spent) | the message's class waits until vivo's day rolls over: asking again the same day lowers vivo's quota |
/// | 10045 (app under review), 10094 (the token's app is not the body's) | the app pauses |
/// | 10096, 10097 (a category vivo refuses, or one that does not match its classification) | the app pauses: a value the configuration supplies |
/// | 10200-10299 but 10250/10252/10254 (the auth token refused) | renew the token and send again; the same again at once pauses the app |
/// | 10250, HTTP 429/503 | retry, over the rate |
/// | HTTP 5xx | retry |
/// | any other result | dead letter: the result, and `desc` as detail |
/// | no result: 4xx | the app pauses: not vivo answering; no result with 200: retry |
enum VivoResponseClassifier {
    struct Verdict {
        var answer: ServiceAnswer
        var credentialAccepted = false
    }

    static let quotaResults: Set<Int64> = [10070, 10252, 10254]
    static let appRefusedResults: Set<Int64> = [10045, 10094]
    static let configurationResults: Set<Int64> = [10096, 10097]

    static func classify(status: Int, body: [UInt8], count: Int, tokenAt: (Int) -> String, nowMillis: Int64,
                         quotaDay: QuotaDay, retryAfter: String? = nil) -> Verdict {
        let parsed = VivoAnswer(body)
        guard let result = parsed.result else {
            return Verdict(answer: UncodedAnswer.classify(status: status, vendor: "Vivo", answer: "a vivo answer", code: "a vivo result",
                                                          retryAfter: retryAfter))
        }
        let reason = String(result)
        let decision: ServiceDecision
        switch result {
        case 0:
            return Verdict(answer: perToken(parsed, count: count, tokenAt: tokenAt, nowMillis: nowMillis), credentialAccepted: true)
        case 10302:
            decision = .feedback(reason: "Unregistered", timestampMillis: nowMillis)
        case _ where quotaResults.contains(result):
            decision = .quotaSpent(reason: reason, untilWallMillis: quotaDay.nextRollover(afterWallMillis: nowMillis))
        case _ where appRefusedResults.contains(result):
            decision = .credentialRefused(reason: reason)
        case _ where configurationResults.contains(result):
            decision = .configurationRefused(reason: reason, detail: (parsed.desc ?? "category refused")
                + "; check the app's classification and category in the vivo block")
        case 10250:
            return Verdict(answer: ServiceAnswer(.retry(reason: reason, detail: parsed.desc), reason: reason, overRate: true))
        case 10200...10299:
            return Verdict(answer: ServiceAnswer(.renewAndResend(reason: reason), reason: reason))
        default:
            if status >= 500 { return Verdict(answer: ServiceAnswer(.retry(reason: reason, detail: parsed.desc), reason: reason)) }
            decision = .deadLetter(reason: reason, detail: parsed.desc)
        }
        return Verdict(answer: ServiceAnswer(decision, reason: reason), credentialAccepted: true)
    }

    /// Result 0: every token delivered except those `invalidUser(s)` names.
    static func perToken(_ parsed: VivoAnswer, count: Int, tokenAt: (Int) -> String, nowMillis: Int64) -> ServiceAnswer {
        var byToken: [String: ServiceDecision] = [:]
        for (token, status) in parsed.invalid where byToken[token] == nil {
            byToken[token] = status == 4 ? .credentialRefused(reason: "NotATestDevice")
                : .feedback(reason: "Unregistered", timestampMillis: nowMillis)
        }
        var exceptions: [(position: Int, decision: ServiceDecision)] = []
        if !byToken.isEmpty {
            for position in 0..<max(0, count) {
                if let decision = byToken[tokenAt(position)] { exceptions.append((position, decision)) }
            }
        }
        return ServiceAnswer(.delivered, reason: "0", exceptions: exceptions)
    }
}
