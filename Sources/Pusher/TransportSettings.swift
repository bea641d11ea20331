import PushCore

/// How one transport reaches APNs for one credential.
public struct TransportSettings: Sendable {
    /// `https://host:port`, without a trailing slash.
    public var baseURL: String
    public var caFile: String = ""
    /// Connections libcurl may open to the endpoint for this credential (this lane's share of `apns.max_connections`).
    public var connections: Int = 4
    /// Requests handed to libcurl at once at most. Within it the transport adapts to what the servers take:
    /// requests waiting inside libcurl for a free stream are kept to a fraction of those on the wire.
    public var maxActiveRequests: Int = 2000
    /// Requests handed to libcurl at first, before the servers' answers have shown what they take.
    public var initialActiveRequests: Int = 1
    /// Counted from when the request goes on the wire: waiting for a connection or a free stream is not
    /// counted (opening a connection has its own limit of the same length).
    public var requestTimeoutMillis: Int = 10_000
    /// Drive libcurl with curl_multi_socket_action and epoll instead of curl_multi_perform and curl_multi_poll.
    public var socketAction = false
    public var retry = RetrySettings()
    /// While APNs refuses the credential the app is paused: a probe after the first interval, the interval
    /// doubling up to the longest while probes are refused (`CredentialPause`).
    public var credentialProbeFirstMillis = 1000
    public var credentialProbeLongestMillis = 60_000
    /// Certificate auth: client certificate file (PEM with its key, or PKCS#12) and password.
    public var certificateFile: String?
    public var certificatePassword = Secret("")
    /// The app this credential serves (its first topic), for metric labels, readiness and logs.
    public var app = ""

    public init(baseURL: String) { self.baseURL = baseURL }
}
