import Foundation
import PushCore

/// What one FCM answer means (docs/fcm.md's table): the error code is FCM's `error.details[].errorCode`
/// where an FcmError detail names one, else `error.status`.
enum FCMResponseClassifier {
    /// 429's wait when it names no time: "for project quota wait at least a minute" (Google's advice).
    static let quotaDefaultMillis: Int64 = 60_000

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
        case (400, "INVALID_ARGUMENT") where error.saysTokenInvalid:
            return .feedback(reason: "BadDeviceToken", timestampMillis: nowMillis)
        case (401, _) where error.detailCode == nil:
            // Our access token was rejected (expired, revoked), not the message.
            return .renewAndResend(reason: "UNAUTHENTICATED")
        case (401, "THIRD_PARTY_AUTH_ERROR"), (403, "PERMISSION_DENIED"), (403, "THIRD_PARTY_AUTH_ERROR"):
            return .credentialRefused(reason: code)
        case (429, _):
            return .retry(reason: code, notBeforeMillis: asked ?? quotaDefaultMillis, holdService: true)
        case (500..., _):
            return .retry(reason: code, notBeforeMillis: asked)
        default:
            return .deadLetter(reason: error.message.map { "\(code): \($0)" } ?? code)
        }
    }

    /// The answer's error code, as the responses metric names it: FCM's `errorCode` detail, else `error.status`.
    static func code(status: Int, body: [UInt8]) -> String {
        let error = parseBody(body)
        return error.detailCode ?? error.status ?? "HTTP\(status)"
    }

    struct ErrorBody {
        var status: String?
        var detailCode: String?
        var message: String?

        /// INVALID_ARGUMENT about the token rather than the message: "The registration token is not a valid
        /// FCM registration token" (and FCM's older wording, "Invalid registration token").
        var saysTokenInvalid: Bool {
            guard let message = message?.lowercased() else { return false }
            return message.contains("registration token")
        }
    }

    /// The server's words end up in dead letters and logs: parsed strictly, kept short and printable.
    static func parseBody(_ body: [UInt8]) -> ErrorBody {
        guard !body.isEmpty, let object = try? JSONParser.parse(body, maxDepth: 8), let error = object["error"] else {
            return ErrorBody()
        }
        var result = ErrorBody()
        result.status = error["status"]?.stringValue.map { Printable.clipped($0, to: 60) }
        result.message = error["message"]?.stringValue.map { Printable.clipped($0, to: 160) }
        if case .array(let details)? = error["details"] {
            for detail in details {
                if detail["@type"]?.stringValue?.hasSuffix("google.firebase.fcm.v1.FcmError") == true,
                   let code = detail["errorCode"]?.stringValue {
                    result.detailCode = Printable.clipped(code, to: 60)
                    break
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
