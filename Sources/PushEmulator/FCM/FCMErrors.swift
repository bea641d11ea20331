/// FCM HTTP v1's error answers, in Google's shape:
/// `{"error":{"code":N,"message":"...","status":"...","details":[...]}}`.
///
/// Senders classify by `details[].errorCode` (the FcmError detail) and fall back to `status`: so the emulator
/// says exactly what Google says, including the cases where the two differ (UNREGISTERED is `NOT_FOUND`,
/// SENDER_ID_MISMATCH is `PERMISSION_DENIED`, QUOTA_EXCEEDED is `RESOURCE_EXHAUSTED`), and leaves the FcmError
/// detail out where Google does (a rejected access token: 401 without details, which tells a sender to renew it).
public struct FCMError: Sendable, Equatable, Error {
    /// HTTP status, also the body's `error.code`.
    public var code: Int
    public var message: String
    /// google.rpc.Code name: `INVALID_ARGUMENT`, `UNAUTHENTICATED`, ...
    public var status: String
    /// The FcmError detail's `errorCode`; nil: no FcmError detail.
    public var errorCode: String?
    /// A google.rpc.BadRequest detail naming the field at fault (body validation errors).
    public var field: String?
    /// A google.rpc.ErrorInfo detail's `reason` (permission errors).
    public var errorInfoReason: String?
    /// A google.rpc.QuotaFailure detail's violation (429s): which quota was exceeded.
    public var quotaViolation: (subject: String, description: String)?

    public static func == (a: FCMError, b: FCMError) -> Bool {
        a.code == b.code && a.message == b.message && a.status == b.status && a.errorCode == b.errorCode && a.field == b.field
            && a.errorInfoReason == b.errorInfoReason && a.quotaViolation?.subject == b.quotaViolation?.subject
            && a.quotaViolation?.description == b.quotaViolation?.description
    }

    public init(code: Int, message: String, status: String, errorCode: String? = nil, field: String? = nil,
                errorInfoReason: String? = nil, quotaViolation: (subject: String, description: String)? = nil) {
        self.quotaViolation = quotaViolation
        self.code = code
        self.message = message
        self.status = status
        self.errorCode = errorCode
        self.field = field
        self.errorInfoReason = errorInfoReason
    }

    /// What a sender's classification keys on: the FcmError code, else the status.
    public var reason: String { errorCode ?? status }

    public var json: String {
        var details: [String] = []
        if let errorCode {
            details.append(#"{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"\#(errorCode)"}"#)
        }
        if let field {
            details.append(#"{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"field":"\#(JSONText.escaped(field))","description":"\#(JSONText.escaped(message))"}]}"#)
        }
        if let errorInfoReason {
            details.append(#"{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"\#(errorInfoReason)","domain":"googleapis.com","metadata":{"service":"fcm.googleapis.com","permission":"cloudmessaging.messages.create"}}"#)
        }
        if let quotaViolation {
            details.append(#"{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"subject":"\#(JSONText.escaped(quotaViolation.subject))","description":"\#(JSONText.escaped(quotaViolation.description))"}]}"#)
        }
        let detailsField = details.isEmpty ? "" : #","details":[\#(details.joined(separator: ","))]"#
        return #"{"error":{"code":\#(code),"message":"\#(JSONText.escaped(message))","status":"\#(status)"\#(detailsField)}}"#
    }
}

extension FCMError {
    // MARK: Authentication and permission (no FcmError detail)

    /// An access token Google does not accept (unknown, expired, revoked): 401 without details, so a sender
    /// renews its token and sends again.
    static let invalidCredentials = FCMError(
        code: 401, message: "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid "
            + "authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.",
        status: "UNAUTHENTICATED")

    static let missingCredentials = FCMError(
        code: 401, message: "Request is missing required authentication credential. Expected OAuth 2 access token, login cookie or "
            + "other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.",
        status: "UNAUTHENTICATED")

    /// The access token's service account has no rights on the project in the path (or it does not exist).
    static func permissionDenied(project: String) -> FCMError {
        FCMError(code: 403, message: "Permission 'cloudmessaging.messages.create' denied on resource "
                    + "'//cloudresourcemanager.googleapis.com/projects/\(project)' (or it may not exist).",
                 status: "PERMISSION_DENIED", errorInfoReason: "IAM_PERMISSION_DENIED")
    }

    static func notFound(path: String) -> FCMError {
        FCMError(code: 404, message: "The requested URL \(path) was not found on this server.", status: "NOT_FOUND")
    }

    static let methodNotAllowed = FCMError(code: 405, message: "Only POST is supported on messages:send.", status: "UNIMPLEMENTED")

    // MARK: The message (INVALID_ARGUMENT)

    static func invalidArgument(_ message: String, field: String? = nil) -> FCMError {
        FCMError(code: 400, message: message, status: "INVALID_ARGUMENT", errorCode: "INVALID_ARGUMENT", field: field)
    }

    /// A malformed registration token: Google's exact words, which senders match to tell it from a bad message.
    static let invalidRegistrationToken = invalidArgument("The registration token is not a valid FCM registration token",
                                                          field: "message.token")

    // MARK: Per token and per project

    static let unregistered = FCMError(code: 404, message: "Requested entity was not found.", status: "NOT_FOUND",
                                       errorCode: "UNREGISTERED")
    static let senderIDMismatch = FCMError(code: 403, message: "SenderId mismatch", status: "PERMISSION_DENIED",
                                           errorCode: "SENDER_ID_MISMATCH")
    static let thirdPartyAuthError = FCMError(code: 401, message: "Auth error from APNS or Web Push Service", status: "UNAUTHENTICATED",
                                              errorCode: "THIRD_PARTY_AUTH_ERROR")
    /// The project's rate (600,000 messages a minute by default). Google documents that a 429 carries a
    /// google.rpc.QuotaFailure naming the quota, not its exact words: these are the emulator's.
    static let quotaExceeded = FCMError(
        code: 429, message: "Quota exceeded for quota metric 'Send requests' and limit 'Send requests per minute' of service "
            + "'fcm.googleapis.com'.", status: "RESOURCE_EXHAUSTED", errorCode: "QUOTA_EXCEEDED",
        quotaViolation: ("project", "Send requests per minute per project"))

    /// One device's rate (240 messages a minute, 5,000 an hour on Android).
    static let deviceQuotaExceeded = FCMError(
        code: 429, message: "Quota exceeded for the device's message rate.", status: "RESOURCE_EXHAUSTED", errorCode: "QUOTA_EXCEEDED",
        quotaViolation: ("device", "Messages per minute per device"))
    static let unavailable = FCMError(code: 503, message: "The service is currently unavailable.", status: "UNAVAILABLE",
                                      errorCode: "UNAVAILABLE")
    static let internalError = FCMError(code: 500, message: "Internal error encountered.", status: "INTERNAL", errorCode: "INTERNAL")

    /// The answers a token prefix or `--fcm-answer` can name, by FcmError code.
    public static func named(_ errorCode: String) -> FCMError? {
        switch errorCode.uppercased() {
        case "UNREGISTERED": return unregistered
        case "INVALID_ARGUMENT": return invalidRegistrationToken
        case "SENDER_ID_MISMATCH": return senderIDMismatch
        case "THIRD_PARTY_AUTH_ERROR": return thirdPartyAuthError
        case "QUOTA_EXCEEDED": return quotaExceeded
        case "QUOTA_EXCEEDED_DEVICE": return deviceQuotaExceeded
        case "UNAVAILABLE": return unavailable
        case "INTERNAL": return internalError
        case "UNAUTHENTICATED": return invalidCredentials
        case "PERMISSION_DENIED": return permissionDenied(project: "emulated")
        default: return nil
        }
    }
}
