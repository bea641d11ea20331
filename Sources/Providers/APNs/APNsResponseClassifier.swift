import PushCore

/// What to do with one APNs answer (docs/transport.md).
public enum ResponseDecision: Equatable, Sendable {
    case delivered
    /// Tell the backend to stop using the token; not retried.
    case feedback(reason: String, timestampMillis: Int64)
    /// Transient: retry with backoff, up to max_attempts.
    case retry(reason: String)
    /// The JWT is too old: renew it (if the 20-minute rule allows) and retry.
    case renewTokenAndRetry(reason: String)
    /// Permanent for this notification: dead letter, no retry.
    case deadLetter(reason: String)
}

extension ResponseDecision {
    /// The reason in the decision; empty for a delivery.
    public var reason: String {
        switch self {
        case .delivered: return ""
        case .feedback(let reason, _), .retry(let reason), .renewTokenAndRetry(let reason), .deadLetter(let reason): return reason
        }
    }
}

public enum APNsResponseClassifier {
    static let feedbackReasons: Set<String> = ["Unregistered", "ExpiredToken", "BadDeviceToken", "DeviceTokenNotForTopic"]
    /// Answers that mean the credential itself is refused: no retry can fix them, every request of the app fails alike.
    public static let credentialReasons: Set<String> = [
        "InvalidProviderToken", "MissingProviderToken", "BadCertificate", "BadCertificateEnvironment",
    ]

    /// - Parameters:
    ///   - status: the HTTP status, or nil when the request failed below HTTP (reset, GOAWAY, timeout).
    ///   - body: the response body (APNs sends `{"reason": ..., "timestamp": ...}` on errors).
    ///   - now: the feedback time when APNs gives none; the wall clock, read only then (not for every 200).
    public static func classify(status: Int?, body: [UInt8], transportError: String? = nil,
                                now: Int64? = nil) -> ResponseDecision {
        guard let status else { return .retry(reason: transportError ?? "ConnectionError") }
        if status == 200 { return .delivered }
        let (reason, parsed) = parseBody(body)
        let timestamp = parsed ?? now ?? WallClock.nowMillis()
        let named = reason ?? "HTTP\(status)"
        if let reason, feedbackReasons.contains(reason), status == 400 || status == 410 {
            return .feedback(reason: reason, timestampMillis: timestamp)
        }
        switch (status, reason) {
        case (403, "ExpiredProviderToken"):
            return .renewTokenAndRetry(reason: named)
        case (403, let reason?) where credentialReasons.contains(reason):
            // The credential, not the notification: the transport pauses the app and holds the request
            // without spending its attempts (`CredentialPause`) rather than dead-lettering the whole backlog.
            return .retry(reason: named)
        case (429, _), (500, _), (502, _), (503, _), (504, _):
            return .retry(reason: named)
        case (410, _):
            return .feedback(reason: reason ?? "Unregistered", timestampMillis: timestamp)
        default:
            return .deadLetter(reason: named)
        }
    }

    static func parseBody(_ body: [UInt8]) -> (reason: String?, timestampMillis: Int64?) {
        // The server's words end up in dead letters and logs: parsed strictly, the reason kept short and printable.
        guard !body.isEmpty, let object = try? JSONParser.parse(body, maxDepth: 4) else { return (nil, nil) }
        let reason = object["reason"]?.stringValue.map { Printable.clipped($0, to: 100) }
        let timestamp = object["timestamp"]?.exactInteger
        return (reason, timestamp)
    }
}
