import PushCore

/// `apns.endpoint`: Apple's production or sandbox servers, or another (the emulator).
public enum APNsEndpoint: Sendable, Equatable {
    case production, sandbox
    case custom(String)

    public var baseURL: String {
        switch self {
        case .production: return "https://api.push.apple.com"
        case .sandbox: return "https://api.sandbox.push.apple.com"
        case .custom(let url): return url
        }
    }
}

public enum AppCredential: Sendable, Equatable, Hashable {
    /// Token-based: ES256 JWT from a .p8 key.
    case token(teamID: String, keyID: String, keyFile: String)
    /// Certificate-based: PEM or PKCS#12 client certificate.
    case certificate(file: String, password: Secret)
}

public struct APNsApp: Sendable, Equatable {
    public var topic: String
    public var credential: AppCredential
    public init(topic: String, credential: AppCredential) {
        self.topic = topic
        self.credential = credential
    }
}

/// The `apns` block (docs/configuration.md) as the module reads it (`APNsSettings(block:)`): the endpoint, the
/// transport and its connections, and the apps with their credentials.
public struct APNsSettings: Sendable, Equatable {
    public var endpoint = APNsEndpoint.production
    public var caFile = ""
    /// Connections per endpoint and credential.
    public var connections = 4
    /// Connections per endpoint and credential at most: more than `connections` are opened when the
    /// servers' stream limits are scarce.
    public var maxConnections = 16
    /// The HTTP/2 client: `nghttp2` (our own sessions with libnghttp2 and OpenSSL: stream limits exact to
    /// the servers' SETTINGS) or `libcurl` (libcurl multi, which cannot see them).
    public var transport = "nghttp2"
    /// Transport lanes (each a thread with its own HTTP/2 client) per credential, sharing `connections`;
    /// 0 means one per CPU core, at most `connections`.
    public var transportThreads = 0
    /// libcurl only: how each lane drives it, `poll` (curl_multi_perform and curl_multi_poll) or `epoll`
    /// (curl_multi_socket_action with an epoll set).
    public var eventLoop = "poll"
    /// PING a connection that has received nothing for this long; unanswered within the request timeout,
    /// the connection is replaced (nghttp2).
    public var pingIntervalMillis = 30_000
    public var requestTimeoutMillis = 10_000
    /// While APNs refuses an app's credential its sending is paused and probed with one request, after 1 s
    /// and then twice as long each time, up to this.
    public var credentialProbeMaxMillis = 60_000
    public var apps: [APNsApp] = []
    public init() {}
}
