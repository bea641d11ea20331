import PushCore

/// How one transport reaches APNs for one credential.
public struct TransportSettings: Sendable {
    /// `https://host:port`, without a trailing slash.
    public var baseURL: String
    public var caFile: String = ""
    /// Connections libcurl may open to the endpoint for this credential.
    public var connections: Int = 4
    /// Streams the transport keeps in flight at once across its connections; beyond the server's
    /// SETTINGS_MAX_CONCURRENT_STREAMS libcurl queues them, so this mainly bounds memory.
    public var maxActiveRequests: Int = 2000
    public var requestTimeoutMillis: Int = 10_000
    public var retry = RetrySettings()
    /// Certificate auth: client certificate file (PEM with its key, or PKCS#12) and password.
    public var certificateFile: String?
    public var certificatePassword = Secret("")
    /// The app this credential serves (its first topic), for metric labels, readiness and logs.
    public var app = ""

    public init(baseURL: String) { self.baseURL = baseURL }
}
