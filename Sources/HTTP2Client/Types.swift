/// Where and how HTTP2Client connects. One client talks to one endpoint (host:port) over several connections.
public struct HTTP2Endpoint: Sendable {
    public var host: String
    public var port: Int
    /// PEM file of the CA(s) to trust for the server certificate; "" = the system's default CA paths.
    /// A file given here is trusted alone (no system CAs), so pinning a private or Apple CA stays pinning.
    public var caFile: String = ""
    /// Client certificate: PEM holding certificate and key, or PKCS#12 (.p12/.pfx, or any non-PEM content).
    public var clientCertificateFile: String? = nil
    /// The certificate's password (PEM key or PKCS#12). Kept redacted: printing or dumping an endpoint shows
    /// `<redacted>` in its place.
    public var clientCertificatePassword: String {
        get { redactedPassword.value }
        set { redactedPassword = RedactedText(newValue) }
    }
    private var redactedPassword = RedactedText("")
    /// Connections opened at start, spaced (never more than one new connection per 250 ms).
    public var initialConnections: Int = 1
    /// More connections (up to this many usable ones) are opened, one at a time and spaced, while the caller
    /// reports waiting work (`waitingWork`) and no stream is free.
    public var maxConnections: Int = 4
    /// A connection with no frame received for this long gets a PING; no ACK within pingTimeoutMillis: closed.
    public var pingIntervalMillis: Int = 30_000
    public var pingTimeoutMillis: Int = 10_000
    /// Name lookup + TCP connect + TLS handshake + the server's first SETTINGS frame.
    public var connectTimeoutMillis: Int = 10_000
    /// Surplus connections (above initialConnections) with no stream for this long are closed gracefully.
    public var idleCloseMillis: Int = 60_000
    /// Streams allowed on a connection until its first 2xx answer: with token auth Apple allows one stream
    /// until a request with a valid token succeeded.
    public var firstStreamLimit: Int = 1
    /// Our own cap on streams per connection, used when the server advertises more or no limit at all
    /// (HTTP/2's default is unlimited); Apple advertises 500-1,500.
    public var maxStreamsPerConnection: Int = 1_000
    /// The most of an answer's body kept (the rest is dropped): Apple's and Google's error bodies are small JSON,
    /// a vendor's answer can list a thousand refused tokens.
    public var responseBodyLimit: Int = 4096
    /// Offer `http/1.1` by ALPN beside `h2`: a server without HTTP/2 then completes the handshake and says so,
    /// and the connection fails with `ALPN: the server did not select h2 (selected: http/1.1)` (see
    /// `HTTP2Client.selectedHTTP1`), which a caller that can also speak HTTP/1.1 takes as the server's choice.
    /// Off: `h2` alone, as Apple and Google expect.
    public var offersHTTP1: Bool = false
    /// Name resolution, run on a thread of its own for every connection opened (Apple asks for fresh DNS on every
    /// (re)connect). Tests replace it, with a lookup that blocks, say.
    public var resolver: HTTP2Resolver = HTTP2Endpoint.systemResolver

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }
}

/// One request: always `POST https://<endpoint host><path><pathSuffix>` with the shared header block and body.
/// `id` is the caller's; it must be unique among the requests in flight on one client. The path comes in two
/// parts so that a caller with a fixed prefix and a per-request tail (Apple's: `/3/device/` and the token) need not
/// build a string per request: the client joins them in a buffer of its own.
public struct HTTP2Request: Sendable {
    public var id: UInt64
    public var path: String
    public var pathSuffix: String
    public var headers: HTTP2HeaderBlock
    public var body: HTTP2Body

    public init(id: UInt64, path: String, pathSuffix: String = "", headers: HTTP2HeaderBlock, body: HTTP2Body) {
        self.id = id
        self.path = path
        self.pathSuffix = pathSuffix
        self.headers = headers
        self.body = body
    }
}

/// What happened during one `poll`. Every started request ends in exactly one of response / refused / lost,
/// unless it was cancelled (no event then) or still in flight at `close()` (returned by it).
public enum HTTP2Event: Sendable, Equatable {
    /// A complete answer. `body` keeps at most 4 KB (Apple's error bodies are small JSON).
    /// `headersSentAtNanos`: CLOCK_MONOTONIC time of the flush that sent the request's HEADERS.
    /// `retryAfter`: the answer's `retry-after` header (seconds or an HTTP date), if any.
    case response(id: UInt64, status: Int, body: [UInt8], headersSentAtNanos: UInt64, retryAfter: String? = nil)
    /// The server never processed it (REFUSED_STREAM, above a GOAWAY's last_stream_id, or never sent because
    /// its connection closed first): safe to send again.
    case refused(id: UInt64, reason: String)
    /// HEADERS were sent but no complete answer came (connection died, stream reset): it may have been delivered.
    case lost(id: UInt64, reason: String)
    /// TLS up, ALPN h2 verified, the server's SETTINGS received.
    case connectionOpened(connection: Int)
    /// Any end of a connection, including failed connects ("ConnectionError: ...").
    case connectionClosed(connection: Int, reason: String)
    case goaway(connection: Int, lastStreamID: Int32, errorCode: UInt32, debugData: String)
}

/// Failures of `HTTP2Client.init` (TLS context, credentials, event loop).
public struct HTTP2ClientError: Error, CustomStringConvertible, Sendable {
    public let description: String
    init(_ description: String) { self.description = description }
}
