import AndroidPushKit
import ProviderKit
import PushCore

/// What one MiPush answer means for the tokens of its request (docs/vendors.md, "Outcomes"). Reasons are Xiaomi's
/// codes as text (`"10017"`), so dead letters and tools select on them; its words go to the dead letter's
/// `detail`. The answer's `reason` (for the responses metric) is the same text, "" for success. The scheduler
/// counts every HTTP 200 under (200, "") whatever its reason, so the codes MiPush answers inside a 200 reach the
/// retries metric and the dead letters, not yet the responses metric.
///
/// - HTTP 200 and code 0: delivered, except the regIds `data.bad_regids` names: feedback `Unregistered` each
///   (which `AllTokensRefusedRule` turns into dead letters when every regId is named while the app is quiet: a
///   wrong region host or a wrong app, since Xiaomi lists regIds of another region as invalid).
/// - HTTP 200 and another code: by `XiaomiCode`; a 10034 waits for the next Xiaomi day (`QuotaDay`, `quota_reset`); a
///   27001 (the channel) pauses the app, since every message of it would meet the same refusal (the service makes
///   it a dead letter when the message's own `xiaomi` object chose the channel).
/// - HTTP 200 whose body is no MiPush answer (a proxy's page): retried. Marking it delivered could lose every
///   message of a misrouted app; a retry at worst sends a message twice. A cut body cannot be it: the lanes
///   keep answers up to `XiaomiLanes.responseBodyLimit`, enough for 1,000 regIds of the longest kind.
/// - HTTP 5xx and 429: retried (the facts' "HTTP ≠ 200: transport or server error"), after `Retry-After` when
///   it gives seconds; 503 (Xiaomi's flow control) and 429 also lower the app's rate, as 10027 does: both say
///   "slower", and the lowering is bounded and undone after a quiet spell.
/// - Another HTTP status with a MiPush error code in its body: by the code. Xiaomi answers its errors with
///   HTTP 200 as the open-source clients read it (unverified); this is the other reading, at no cost.
/// - HTTP 401 without one: the key is refused, and the app pauses. The general rule for a 401 (docs/vendors.md) is "renew
///   and resend, the same again at once pauses": a MiPush key is static (no expiry, nothing to renew), so the
///   resend would meet the same 401 at once, and the pause is where that rule ends.
/// - Any other status: retried.
enum XiaomiAnswerClassifier {

    /// `regIDs` are the job's tokens, `tokens` the request's indices into them.
    static func classify(status: Int, body: [UInt8], retryAfter: String?, tokens: RequestTokens, regIDs: [String],
                         nowMillis: Int64, quotaDay: QuotaDay) -> ServiceAnswer {
        if status == 200 {
            let answer = XiaomiAnswerBody(body)
            guard let code = answer.code else {
                return ServiceAnswer(.retry(reason: "NotMiPush", detail: "HTTP 200 without a MiPush answer"), reason: "NotMiPush")
            }
            return classify(code: code, answer, tokens: tokens, regIDs: regIDs, nowMillis: nowMillis, quotaDay: quotaDay)
        }
        let label = "HTTP\(status)"
        if status >= 500 || status == 429 {
            return ServiceAnswer(.retry(reason: label, notBeforeMillis: RetryAfter.millis(retryAfter), detail: XiaomiAnswerBody(body).detail),
                                 reason: label, overRate: status == 503 || status == 429)
        }
        let answer = XiaomiAnswerBody(body)
        if let code = answer.code, code != 0 {
            return classify(code: code, answer, tokens: tokens, regIDs: regIDs, nowMillis: nowMillis, quotaDay: quotaDay)
        }
        if status == 401 { return ServiceAnswer(.credentialRefused(reason: label), reason: label) }
        return ServiceAnswer(.retry(reason: label, detail: answer.detail), reason: label)
    }

    static func classify(code: Int64, _ answer: XiaomiAnswerBody, tokens: RequestTokens, regIDs: [String], nowMillis: Int64,
                         quotaDay: QuotaDay) -> ServiceAnswer {
        let text = String(code)
        switch XiaomiCode.kind(of: code) {
        case .success:
            var exceptions: [(position: Int, decision: ServiceDecision)] = []
            if !answer.badRegIDs.isEmpty {
                let dead = ServiceDecision.feedback(reason: "Unregistered", timestampMillis: nowMillis)
                tokens.forEach { position, index in
                    if answer.badRegIDs.contains(regIDs[index]) { exceptions.append((position, dead)) }
                }
            }
            return ServiceAnswer(.delivered, reason: "", exceptions: exceptions)
        case .retry:
            return ServiceAnswer(.retry(reason: text, detail: answer.detail), reason: text)
        case .overRate:
            return ServiceAnswer(.retry(reason: text, detail: answer.detail), reason: text, overRate: true)
        case .quotaSpent:
            return ServiceAnswer(.quotaSpent(reason: text, untilWallMillis: quotaDay.nextRollover(afterWallMillis: nowMillis)), reason: text)
        case .credential:
            return ServiceAnswer(.credentialRefused(reason: text), reason: text)
        case .configuration:
            return ServiceAnswer(.configurationRefused(reason: text, detail: answer.detail ?? "channel information mismatch"), reason: text)
        case .message:
            return ServiceAnswer(.deadLetter(reason: text, detail: answer.detail), reason: text)
        }
    }
}
