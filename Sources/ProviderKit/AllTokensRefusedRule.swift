import PushCore

/// The rule that keeps a refusal of the app from wiping its user base, and from silencing it: a vendor names
/// every token of a request dead when the app, its project or its region is wrong (a regional host lists another
/// region's tokens as invalid; a push service refuses another project's tokens), and a backend that believed it
/// would delete every device it has. So the tokens a vendor names dead become dead letters `AllTokensRefused`
/// (kept, replayable with `worker dlq replay` once the cause is fixed, counted and alerted) instead of feedback when
///
/// - every token of the request was refused while the app has delivered nothing for `AppDeliveryRecord.quietMillis`, or
/// - more than half of the app's tokens answered within a minute were named dead (at least `surgeMinimum`).
///
/// The app itself goes on sending: nothing pauses, so one dead token can never hold a quiet app's other messages.
/// Any provider whose answers name tokens dead applies it after reading the answer.
public enum AllTokensRefusedRule {
    public static let reason = "AllTokensRefused"

    /// `answer` for a request of `count` tokens, with every dead-named token turned into an `AllTokensRefused`
    /// dead letter where the rule holds; records the answer's deliveries and dead tokens in `record`.
    public static func apply(_ answer: ServiceAnswer, count: Int, record: AppDeliveryRecord, nowMillis: Int64,
                             service: String) -> ServiceAnswer {
        guard count > 0 else { return answer }
        var dead = 0
        var delivered = 0
        var exceptional = 0
        for (position, decision) in answer.exceptions where position >= 0 && position < count {
            exceptional += 1
            if case .feedback = decision { dead += 1 } else if decision == .delivered { delivered += 1 }
        }
        let rest = max(0, count - exceptional)
        if case .feedback = answer.decision { dead += rest } else if answer.decision == .delivered { delivered += rest }
        guard dead > 0 || delivered > 0 else { return answer }
        let quiet = !record.deliveredRecently(nowMillis: nowMillis)
        let surge = record.noteAnswered(dead + delivered, dead: dead, nowMillis: nowMillis)
        if delivered > 0 { record.delivered(atMillis: nowMillis) }
        let detail: String
        if dead == count && quiet {
            detail = "\(service) refused every token of the request while the app had delivered nothing for "
                + "\(AppDeliveryRecord.quietMillis / 60_000) minutes: a wrong app, project or region refuses every device; "
                + "replay these once the configuration is right"
        } else if surge && dead > 0 {
            detail = "\(service) named more than half of the app's tokens dead within a minute: a console change or a "
                + "wrong region looks like this; replay these once the configuration is right"
        } else {
            return answer
        }
        let refused = ServiceDecision.deadLetter(reason: reason, detail: detail)
        var result = answer
        if case .feedback = answer.decision { result.decision = refused }
        for index in result.exceptions.indices {
            if case .feedback = result.exceptions[index].decision { result.exceptions[index].decision = refused }
        }
        return result
    }
}
