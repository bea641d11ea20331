import PushCore

/// Which HTTP/2 client a transport drives (a provider's `transport` setting, or the module's own choice).
public enum TransportKind: String, Sendable, CaseIterable {
    /// Our own HTTP/2 sessions: libnghttp2 and OpenSSL, stream limits exact to the servers' SETTINGS.
    case nghttp2
    /// libcurl's multi interface (the design card's client); it cannot see the servers' SETTINGS.
    case libcurl
}

/// How one transport lane reaches its push service for one credential.
public struct TransportSettings: Sendable {
    /// `https://host:port`, without a trailing slash.
    public var baseURL: String
    public var caFile: String = ""
    public var driver: TransportKind = .libcurl
    /// Connections opened at start (this lane's share of the provider block's `connections`)...
    public var initialConnections: Int = 1
    /// ...and at most, when the servers' stream limits are scarce (this lane's share of its `max_connections`).
    public var connections: Int = 4
    /// libcurl only: requests in flight at once at most. libcurl cannot see the servers' stream limits, so the
    /// transport adapts within this bound to what they take (requests waiting inside libcurl for a free stream
    /// are kept to a fraction of those on the wire). With nghttp2 the ceiling is what the servers allow: the sum
    /// of the open connections' SETTINGS_MAX_CONCURRENT_STREAMS (`collector.max_in_flight` bounds the pipeline).
    public var maxActiveRequests: Int = 2000
    /// Requests handed to libcurl at first, before the servers' answers have shown what they take.
    public var initialActiveRequests: Int = 1
    /// Counted from when the request goes on the wire: waiting for a connection or a free stream is not
    /// counted (opening a connection has its own limit of the same length).
    public var requestTimeoutMillis: Int = 10_000
    /// Isolation: while what waits to start would take the service longer than this to take at the rate it answers
    /// now, the app's further messages are parked rather than held: a busy service keeps its throughput, and holds no
    /// more of the pipeline than it sends in this time. Long enough that an app alone, whose backlog fills the
    /// pipeline's room, is not parked and unparked in turn while its service keeps up at a few thousand a second.
    public var busyWindowMillis: Int = 10_000
    /// Isolation: a service that answers nothing for this long while requests are on the wire is stalled, and the
    /// app's further messages are parked. nil: half the request timeout (at least a second), so that a vendor
    /// answering batches of 1,000 in a second or two is never taken for a stalled one.
    public var stalledAfterMillis: Int?
    /// PING a connection that has received nothing for this long; no answer within the request timeout:
    /// the connection is replaced (nghttp2).
    public var pingIntervalMillis: Int = 30_000
    /// Streams a connection may carry until a request on it succeeded (nghttp2). Apple allows one until a
    /// token-authenticated request succeeded; nil: the servers' SETTINGS from the first request (most services).
    public var streamsBeforeFirstSuccess: Int? = 1
    /// libcurl only: drive it with curl_multi_socket_action and epoll instead of perform and poll.
    public var socketAction = false
    /// libcurl only: offer h2 by ALPN and speak HTTP/1.1 where the server offers only that (the China vendors
    /// document HTTP/1.1); false: HTTP/1.1 alone.
    public var offersHTTP2 = true
    /// With `driver: .nghttp2`: offer HTTP/1.1 by ALPN beside h2, and where the server picks it, send over libcurl's
    /// HTTP/1.1 pool instead (`HTTP1FallbackDriver`). For the vendors, whose servers may speak either: over h2 our
    /// own sessions never hand a request to a connection without a free stream, so its deadline starts when it is
    /// written (libcurl 7.88 starts reading a body while its stream still waits inside nghttp2).
    public var fallsBackToHTTP1 = false
    /// The longest answer body kept. A service with a request per device answers with a small error body; a
    /// vendor's answer that lists the bad tokens of a batch of 1,000 is not small.
    public var responseBodyLimit = 4096
    public var retry = RetrySettings()
    /// While the service refuses the credential the app is paused: a probe after the first interval, the interval
    /// doubling up to the longest while probes are refused (`CredentialPause`).
    public var credentialProbeFirstMillis = 1000
    public var credentialProbeLongestMillis = 60_000
    /// Certificate auth: client certificate file (PEM with its key, or PKCS#12) and password.
    public var certificateFile: String?
    public var certificatePassword = Secret("")
    /// The app this credential serves (its first topic), for metric labels, readiness and logs.
    public var app = ""
    /// This lane's number among its credential's lanes (the stream-limit gauge sums them).
    public var lane = 0
    /// Where the lane says whether it waits and what it holds meanwhile (isolation), and its number there
    /// (among all of the worker's lanes).
    public var waitBoard: AppWaitBoard?
    public var boardLane = 0
    /// Where the lane's policy reads the time (backoff, deadlines, holds, the credential pause, expiry): the
    /// system's clocks unless a test moves time itself (`ManualTransportClock`).
    public var clock: any TransportClock = SystemTransportClock()
    /// The app's rate limits as its service counts them (a vendor's `requests_per_s`, `tokens_per_s`), shared by
    /// every lane of the app; unlimited for services that answer overload with flow control and 429s.
    public var rateLimit: AppRateLimit = .unlimited

    public init(baseURL: String) { self.baseURL = baseURL }
}

extension TransportSettings {
    /// Lane `lane`'s share of its app's connections when `lanes` lanes share them: `connections` opened at start and
    /// at most `maxConnections` (a block's `connections` and `max_connections`), each divided among the lanes and
    /// rounded up, at least one. Values from configuration: no arithmetic on them can trap.
    public mutating func share(connections: Int, maxConnections: Int, lanes: Int, lane: Int) {
        let lanes = Swift.max(1, lanes)
        func divideRoundingUp(_ value: Int) -> Int {
            let value = Swift.max(0, value)
            return value / lanes + (value % lanes == 0 ? 0 : 1)
        }
        initialConnections = Swift.max(1, divideRoundingUp(connections))
        self.connections = Swift.max(initialConnections, divideRoundingUp(Swift.max(maxConnections, connections)))
        self.lane = lane
    }
}
