/// What the emulator remembers per connection: APNs' rules about provider tokens are per connection.
public final class ConnectionState: @unchecked Sendable {
    // Touched only on the connection's event loop (all its streams share it).
    var token: String?
    var claims: ProviderTokenVerifier.Claims?
    /// When the current token was first accepted on this connection (seconds).
    var tokenSince: Int64 = 0
    /// TLS verified a client certificate: certificate-based auth.
    let certificateAuthenticated: Bool
    var streamLimitRaised = false
    /// The limit is 1 after an error answer until the next success (`collapseStreamsOnError`).
    var streamLimitCollapsed = false
    var requests = 0
    /// Streams received and not yet answered, and the highest stream id seen: what a GOAWAY must cover.
    var activeStreams = 0
    var highestStreamID = 0
    var goingAway = false
    /// The FCM listener's connections: SETTINGS_MAX_CONCURRENT_STREAMS is this from the start, never raised or
    /// collapsed (FCM's 100). Nil: APNs's rules.
    let fixedStreamLimit: Int?
    /// A `messages:send` request carried a valid access token (raises the limit as a valid JWT does).
    var fcmAuthenticated = false
    var activeFCMStreams = 0
    var fcmRequests = 0

    public init(certificateAuthenticated: Bool, fixedStreamLimit: Int? = nil) {
        self.certificateAuthenticated = certificateAuthenticated
        self.fixedStreamLimit = fixedStreamLimit
    }
}
