import Foundation

/// Everything the emulator can be told. Defaults behave like a healthy APNs.
public struct EmulatorConfiguration: Sendable {
    /// A signing key APNs knows: its Key ID, Team ID and public key (a .p8 private key works too).
    public struct ProviderKey: Sendable {
        public var keyID: String
        public var teamID: String
        public var keyFile: String
        public init(keyID: String, teamID: String, keyFile: String) {
            self.keyID = keyID
            self.teamID = teamID
            self.keyFile = keyFile
        }
    }

    /// A service account the FCM token endpoint trusts: its `client_email`, `private_key_id` and public key
    /// (PEM; the account's private key, or its JSON key file, works too).
    public struct ServiceAccountKey: Sendable {
        public var clientEmail: String
        public var privateKeyID: String
        public var keyFile: String
        /// The project its access tokens may send to (`messages:send` answers 403 PERMISSION_DENIED for
        /// others). Default: the one its email names, as Google's do (`NAME@PROJECT.iam.gserviceaccount.com`).
        public var projectID: String?
        public init(clientEmail: String, privateKeyID: String, keyFile: String, projectID: String? = nil) {
            self.clientEmail = clientEmail
            self.privateKeyID = privateKeyID
            self.keyFile = keyFile
            self.projectID = projectID ?? Self.project(ofEmail: clientEmail)
        }

        /// `PROJECT` of `NAME@PROJECT.iam.gserviceaccount.com`.
        static func project(ofEmail email: String) -> String? {
            let suffix = ".iam.gserviceaccount.com"
            guard let at = email.lastIndex(of: "@"), email.hasSuffix(suffix) else { return nil }
            let project = email[email.index(after: at)...].dropLast(suffix.count)
            return project.isEmpty ? nil : String(project)
        }
    }

    /// `messages:send`'s answer for registration tokens that start with `prefix` (case-sensitive, as FCM tokens
    /// are): an FcmError code (`UNREGISTERED`, `INVALID_ARGUMENT`, `SENDER_ID_MISMATCH`, `THIRD_PARTY_AUTH_ERROR`,
    /// `QUOTA_EXCEEDED` for the project, `QUOTA_EXCEEDED_DEVICE` for one device's rate, `UNAVAILABLE`, `INTERNAL`)
    /// or `PERMISSION_DENIED`. See `FCMError.named`.
    public struct FCMTokenAnswer: Sendable, Equatable {
        public var prefix: String
        public var errorCode: String
        public init(prefix: String, errorCode: String) {
            self.prefix = prefix
            self.errorCode = errorCode
        }

        /// The prefixes the emulator answers by default (docs/emulator.md).
        public static let defaults: [FCMTokenAnswer] = [
            .init(prefix: "unregistered", errorCode: "UNREGISTERED"),
            .init(prefix: "badtoken", errorCode: "INVALID_ARGUMENT"),
            .init(prefix: "invalid", errorCode: "INVALID_ARGUMENT"),
            .init(prefix: "mismatch", errorCode: "SENDER_ID_MISMATCH"),
            .init(prefix: "thirdparty", errorCode: "THIRD_PARTY_AUTH_ERROR"),
            .init(prefix: "denied", errorCode: "PERMISSION_DENIED"),
            .init(prefix: "quota", errorCode: "QUOTA_EXCEEDED"),
            .init(prefix: "devicequota", errorCode: "QUOTA_EXCEEDED_DEVICE"),
            .init(prefix: "unavailable", errorCode: "UNAVAILABLE"),
            .init(prefix: "internal", errorCode: "INTERNAL"),
        ]
    }

    /// A scripted answer for tokens that start with `prefix` (deterministic fault injection for tests).
    public struct ScriptedAnswer: Sendable, Equatable {
        public var prefix: String
        public var status: Int
        public var reason: String
        /// For 410 answers: the `timestamp` (ms) in the body.
        public var timestamp: Int64?
        public init(prefix: String, status: Int, reason: String, timestamp: Int64? = nil) {
            self.prefix = prefix.lowercased()
            self.status = status
            self.reason = reason
            self.timestamp = timestamp
        }
    }

    public var host = "127.0.0.1"
    /// 0 picks a free port (see `PushEmulator.port`).
    public var port = 2197
    /// PEM certificate and key to serve; when nil a self-signed certificate is generated.
    public var certificateFile: String?
    /// Host names the generated certificate is also valid for, besides localhost and 127.0.0.1.
    public var certificateNames: [String] = []
    public var privateKeyFile: String?
    /// Where to write the CA (the certificate) that clients must trust.
    public var caOutputFile: String?
    /// When set, TLS requires a client certificate signed by this CA: certificate-based auth.
    public var clientCAFile: String?

    public var keys: [ProviderKey] = []
    /// Topics (bundle ids) that may be pushed to; empty allows any. Push-type suffixes (.voip, ...) are allowed too.
    public var topics: [String] = []

    /// SETTINGS_MAX_CONCURRENT_STREAMS a new connection starts with (Apple: 1 with token auth)...
    public var initialMaxConcurrentStreams = 1
    /// ...and the value after its first valid request.
    public var maxConcurrentStreams = 1000
    /// Apple's collapse (radar 27870881): after a rejected notification the connection's limit drops to 1
    /// (a SETTINGS frame), and returns to `maxConcurrentStreams` after the next accepted one.
    public var collapseStreamsOnError = false
    /// Send GOAWAY after this many streams on a connection.
    public var goawayAfterStreams: Int?
    /// Close a connection abruptly (no answer) on this many-th request.
    public var dropAfterRequests: Int?
    /// RST_STREAM frames a client may send per 30 s before the connection is closed (swift-nio-http2's
    /// rapid-reset guard; its own default is 200). Lower it to emulate a strict server.
    public var resetLimit = 1_000_000
    public var latencyMillis = 0
    public var jitterMillis = 0
    /// Share (0...1) of otherwise good requests answered with one of `failureStatuses`.
    public var failureRate = 0.0
    public var failureStatuses: [Int] = [429, 500, 503]

    /// Token -> APNs timestamp (ms) since when it is unregistered: answered 410 Unregistered.
    public var unregistered: [String: Int64] = [:]
    /// Token -> the only topic it belongs to: other topics get 400 DeviceTokenNotForTopic.
    public var tokenTopics: [String: String] = [:]
    public var scripted: [ScriptedAnswer] = []

    /// Append every delivered notification as a JSON line to this file.
    public var recordFile: String?
    /// Called with every answer (token, answer), for programs that embed the emulator (tests).
    public var onAnswer: (@Sendable (_ token: String, _ answer: Answer) -> Void)?
    /// Event-loop threads.
    public var threads = 1

    /// Provider tokens older than this are rejected with ExpiredProviderToken.
    public var tokenMaxAgeSeconds: Int64 = 3600
    /// A connection may switch to a new provider token at most this often (TooManyProviderTokenUpdates).
    public var tokenMinRenewalSeconds: Int64 = 1200

    /// FCM's OAuth 2.0 token endpoint (`FCMTokenEndpoint`): the accounts it trusts, where it answers, the
    /// `aud` it requires (nil: exactly the URL the request was posted to) and the lifetime of the access tokens it issues
    /// (changeable while running: `PushEmulator.fcmTokens`).
    public var fcmServiceAccounts: [ServiceAccountKey] = []
    public var fcmTokenPath = "/token"
    public var fcmTokenAudience: String?
    public var fcmAccessTokenLifetimeSeconds: Int64 = 3600

    /// FCM's `messages:send` is answered on every listener. This one, when set (0: a free port, see
    /// `PushEmulator.fcmPort`), is a second listener with FCM's stream rule: `fcmMaxConcurrentStreams` from the
    /// first SETTINGS on, never changed. (The main listener keeps APNs's: `initialMaxConcurrentStreams`, raised
    /// after the first authenticated request.) SETTINGS are per connection, so one port cannot advertise both.
    public var fcmPort: Int?
    public var fcmMaxConcurrentStreams = 100
    /// Answers by token prefix, first match wins.
    public var fcmTokenAnswers: [FCMTokenAnswer] = FCMTokenAnswer.defaults
    /// The faults at start (changeable while running: `PushEmulator.fcm`).
    public var fcmFaults = FCMFaults()
    /// Revoke every access token issued so far every N seconds (401s mid-run: senders must renew).
    public var fcmRevokeTokensEverySeconds: Int?
    /// The token endpoint answers 503 for the first N seconds after start (senders must wait, not fail).
    public var fcmTokenEndpointDownForSeconds: Int?
    /// Append every delivered FCM message to this file as a JSON line (apart from APNs's `recordFile`).
    public var fcmRecordFile: String?
    /// Called with every `messages:send` answer (token or "" when the body named none), for tests.
    public var onFCMAnswer: (@Sendable (_ token: String, _ answer: FCMAnswer) -> Void)?

    /// The vendor sides' settings (their apps and faults), each side's by its settings type: a side's folder adds
    /// the accessor (`configuration.<vendor>`). Their paths are answered on every listener.
    public var serviceSettings = ServiceSettingsStore()
    /// A listener for the vendors' clients (0: a free port, see `PushEmulator.vendorPort`) that offers both `h2`
    /// and `http/1.1` by ALPN, as the vendors may answer HTTP/1.1 only; HTTP/2 streams from the first SETTINGS:
    /// `vendorMaxConcurrentStreams`.
    public var vendorPort: Int?
    public var vendorMaxConcurrentStreams = 100
    /// Whether the vendor listener offers `h2` by ALPN; false: `http/1.1` alone, as a vendor host that speaks only
    /// HTTP/1.1 (some vendors document no other).
    public var vendorOffersHTTP2 = true

    public init() {}
}

extension EmulatorConfiguration.ServiceAccountKey {
    /// The account of a service account JSON key file (the one the worker is given), trusted as it is.
    public init(serviceAccountFile path: String) throws {
        guard let data = FileManager.default.contents(atPath: path),
              let fields = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let clientEmail = fields["client_email"] as? String, let keyID = fields["private_key_id"] as? String,
              fields["private_key"] is String
        else {
            throw EmulatorError.configuration("\(path) is not a service account JSON key file (client_email, private_key_id, private_key)")
        }
        self.init(clientEmail: clientEmail, privateKeyID: keyID, keyFile: path, projectID: fields["project_id"] as? String)
    }
}
