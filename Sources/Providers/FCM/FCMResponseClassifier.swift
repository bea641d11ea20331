import Foundation
import ProviderKit
import PushCore

/// What one FCM answer means (docs/fcm.md, "Answers"): the error code is FCM's `error.details[].errorCode`
/// where an FcmError detail names one, else `error.status`. Reasons are those codes exactly, so tools can select
/// on them; Google's own words go to the dead letter's `detail`.
enum FCMResponseClassifier {
    /// 429's hold when it names no time: "for project quota wait at least a minute" (Google's advice).
    static let quotaDefaultMillis: Int64 = 60_000
    /// The longest a project is held for one 429, whatever its `Retry-After` says.
    static let longestHoldMillis: Int64 = 3_600_000
    /// Google's sentence for a malformed registration token, the only INVALID_ARGUMENT wording that means the
    /// token rather than the message (with a field violation on `message.token`).
    static let invalidTokenSentence = "the registration token is not a valid fcm registration token"

    static func classify(status: Int, body: [UInt8], retryAfter: String?, nowMillis: Int64) -> ServiceDecision {
        if status == 200 { return .delivered }
        let error = parseBody(body)
        let code = error.detailCode ?? error.status ?? "HTTP\(status)"
        let asked = retryAfter.flatMap { RetryAfter.millis($0, nowMillis: nowMillis) }
        switch (status, code) {
        case (404, "UNREGISTERED"), (400, "UNREGISTERED"):
            return .feedback(reason: "Unregistered", timestampMillis: nowMillis)
        case (403, "SENDER_ID_MISMATCH"):
            return .feedback(reason: "SenderIdMismatch", timestampMillis: nowMillis)
        case (400, "INVALID_ARGUMENT") where error.namesTheToken:
            return .feedback(reason: "BadDeviceToken", timestampMillis: nowMillis)
        case (401, "THIRD_PARTY_AUTH_ERROR"), (403, "THIRD_PARTY_AUTH_ERROR"):
            // The Firebase project's credential for Apple's push service or for web push: only this (iOS or web)
            // token's kind fails, so the token is retried with attempts spent, then dead-lettered; the app goes on
            // for Android tokens.
            return .retry(reason: code, detail: error.message)
        case (401, _) where error.isGoogleError && error.detailCode == nil:
            // Our access token was rejected (expired, revoked), not the message.
            return .renewAndResend(reason: "UNAUTHENTICATED")
        case (403, "PERMISSION_DENIED"):
            return .credentialRefused(reason: code)
        case (429, _):
            if error.quotaIsOneDevice {
                // One device over its rate (240 a minute): only this token backs off; nothing else waits.
                return .retry(reason: code, notBeforeMillis: asked, detail: error.quotaSubject)
            }
            // The project's or a topic's rate, or a 429 that does not say: the whole project holds.
            return .retry(reason: code, notBeforeMillis: min(asked ?? quotaDefaultMillis, longestHoldMillis), holdService: true,
                          detail: error.quotaSubject)
        case (500..., _):
            return .retry(reason: code, notBeforeMillis: asked, detail: error.message)
        case (400..<500, _) where !error.isFCMError:
            // Not FCM's answer (a wrong endpoint, a proxy, an HTML page): no retry and no dead letter fixes the
            // setup, so the app pauses, as for a refused credential.
            return .credentialRefused(reason: "NotFCM: HTTP \(status) without an FCM error")
        default:
            return .deadLetter(reason: code, detail: error.message)
        }
    }

    /// The answer's error code, as the responses metric names it: FCM's `errorCode` detail, else `error.status`.
    static func code(status: Int, body: [UInt8]) -> String {
        let error = parseBody(body)
        return error.detailCode ?? error.status ?? "HTTP\(status)"
    }

    struct ErrorBody {
        /// The body is Google's error object (`{"error":{"status":…}}`).
        var isGoogleError = false
        var status: String?
        var detailCode: String?
        var message: String?
        /// Fields a google.rpc.BadRequest detail names.
        var violatedFields: [String] = []
        /// What a google.rpc.QuotaFailure detail says was exceeded (its violations' subjects and descriptions).
        var quotaViolations: [String] = []

        /// An answer FCM's API gave about this request: a Google error body with an FcmError or BadRequest detail.
        var isFCMError: Bool { isGoogleError && (detailCode != nil || !violatedFields.isEmpty) }

        /// INVALID_ARGUMENT about the token rather than the message: Google's exact sentence, or a field violation
        /// on `message.token`. Any other wording is the message's problem, never a reason to drop a token.
        var namesTheToken: Bool {
            if violatedFields.contains("message.token") { return true }
            guard var text = message?.lowercased().trimmingCharacters(in: .whitespaces) else { return false }
            if text.hasSuffix(".") { text.removeLast() }
            return text == FCMResponseClassifier.invalidTokenSentence
        }

        /// A QuotaFailure that names a device's rate, and no project or topic rate. Google documents the detail
        /// but not its wording, so anything else holds the project (the safe reading).
        var quotaIsOneDevice: Bool {
            let texts = quotaViolations.map { $0.lowercased() }
            return texts.contains { $0.contains("device") } && !texts.contains { $0.contains("project") || $0.contains("topic") }
        }

        var quotaSubject: String? { quotaViolations.isEmpty ? message : quotaViolations.joined(separator: "; ") }
    }

    /// The server's words end up in dead letters and logs: parsed strictly, kept short and printable.
    static func parseBody(_ body: [UInt8]) -> ErrorBody {
        guard !body.isEmpty, let object = try? JSONParser.parse(body, maxDepth: 8), let error = object["error"],
              error.objectMembers != nil else {
            return ErrorBody()
        }
        var result = ErrorBody()
        result.status = error["status"]?.stringValue.map { Printable.clipped($0, to: 60) }
        result.isGoogleError = result.status != nil
        result.message = error["message"]?.stringValue.map { Printable.clipped($0, to: 160) }
        guard case .array(let details)? = error["details"] else { return result }
        for detail in details.prefix(16) {
            let type = detail["@type"]?.stringValue ?? ""
            if type.hasSuffix("google.firebase.fcm.v1.FcmError"), result.detailCode == nil,
               let code = detail["errorCode"]?.stringValue {
                result.detailCode = Printable.clipped(code, to: 60)
            } else if type.hasSuffix("google.rpc.BadRequest"), case .array(let violations)? = detail["fieldViolations"] {
                result.violatedFields += violations.prefix(16).compactMap { $0["field"]?.stringValue.map { Printable.clipped($0, to: 80) } }
            } else if type.hasSuffix("google.rpc.QuotaFailure"), case .array(let violations)? = detail["violations"] {
                for violation in violations.prefix(16) {
                    let words = [violation["subject"]?.stringValue, violation["description"]?.stringValue]
                        .compactMap { $0 }.joined(separator: ": ")
                    if !words.isEmpty { result.quotaViolations.append(Printable.clipped(words, to: 160)) }
                }
            }
        }
        return result
    }
}

/// `Retry-After` as RFC 9110 has it: delay seconds, or an HTTP date.
enum RetryAfter {
    /// Milliseconds from now; nil when it says nothing usable. At most a day: a server's typo is no reason to
    /// hold messages for longer.
    static func millis(_ value: String, nowMillis: Int64) -> Int64? {
        let text = value.trimmingCharacters(in: .whitespaces)
        if let seconds = Int64(text) { return seconds < 0 ? nil : min(seconds, 86_400) * 1000 }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = formatter.date(from: text) else { return nil }
        let at = date.timeIntervalSince1970 * 1000
        guard at.isFinite, at < 9e15 else { return nil }
        return min(max(0, Int64(at) - nowMillis), 86_400_000)
    }
}
