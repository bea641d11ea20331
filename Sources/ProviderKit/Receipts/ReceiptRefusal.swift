/// Why a receipt request (or one status of it) was not used: the `reason` label of `push_receipts_refused_total`,
/// the HTTP status answered, and words for the log (never a secret, never the body).
public struct ReceiptRefusal: Sendable, Equatable, Error {
    public enum Reason: String, Sendable, CaseIterable {
        /// No signature, or one that no configured secret made (a wrong secret path too).
        case badSignature = "bad_signature"
        /// Signed, but at a time too far from now: a replay, or a clock far off.
        case stale
        /// No app takes receipts for it, or the body names an app the signature does not cover.
        case unknownApp = "unknown_app"
        /// Over the listener's body bound, or over the service's own limit of statuses per call.
        case tooLarge = "too_large"
        /// Not the service's format.
        case malformed
    }

    public var reason: Reason
    /// The HTTP status answered for a refused request.
    public var status: Int
    public var detail: String

    public init(_ reason: Reason, status: Int? = nil, _ detail: String) {
        self.reason = reason
        self.status = status ?? Self.defaultStatus(reason)
        self.detail = detail
    }

    static func defaultStatus(_ reason: Reason) -> Int {
        switch reason {
        case .badSignature, .stale: return 403
        case .unknownApp: return 404
        case .tooLarge: return 413
        case .malformed: return 400
        }
    }
}
