import ProviderKit

/// What the `Scheduler` needs from an HTTP/2 client: start a request, cancel
/// one, hand back what happened, wait. The scheduler keeps every policy (queues, retries, expiry, the
/// credential pause, deadlines, metrics); a driver only moves bytes. Two drivers: `NGHTTP2Driver` (our
/// own sessions, libnghttp2 and OpenSSL) and `CurlDriver` (libcurl multi). A driver is used from the
/// transport's thread only, except `wake`, which any thread may call, also after `close`.
package protocol TransportDriver: AnyObject {
    /// How many more requests may start now. `limit` is how many the scheduler would still allow.
    func room(limit: Int) -> Int
    /// Starts `request` on a connection; its completion comes later from `process` (also for a failure).
    func start(_ request: DriverRequest)
    /// Gives up on a request (its deadline passed): no completion is reported for it.
    func cancel(id: Int)
    /// When the request went on the wire (uptime nanoseconds), nil while it waits for a connection.
    func onWireSince(id: Int) -> UInt64?
    /// Does whatever is ready without waiting, and appends what completed.
    func process(into completions: inout [DriverCompletion])
    /// Waits until something happens, `wake` is called, or `timeoutMillis` pass.
    func wait(timeoutMillis: Int32)
    /// Ends `wait` early: safe from any thread at any time.
    func wake()
    /// Closes every connection; returns the requests still in flight (no completion follows for them).
    func close() -> [Int]
    /// Work is waiting for room: a driver may open another connection (within its limits).
    func noteWaitingWork(_ waiting: Bool)

    /// Open connections (for the service's `push_provider_connections`).
    var openConnections: Int { get }
    /// The servers' current SETTINGS_MAX_CONCURRENT_STREAMS summed over open connections; nil if unknown.
    var streamsLimit: Int? { get }
}

/// One request, as a driver sends it: a notification to one device token, or to a batch of them for a service
/// that takes a list.
package struct DriverRequest {
    /// The scheduler's handle for it: unique among requests in flight.
    package let id: Int
    package let job: JobContext
    package let tokens: RequestTokens
    /// `authorization: bearer …` for token auth (nil with a client certificate), and its generation.
    package let bearer: String?
    package let generation: Int
    /// The headers' time slice (`PushService.headerLifetimeMillis`), 0 for services whose headers never age.
    package var headerEpoch: Int64 = 0
    /// When the scheduler started it (monotonic nanoseconds), read once for its fence and the driver.
    package let now: UInt64
}

/// How a request ended, as far as the driver can tell.
package struct DriverCompletion {
    package enum Result {
        /// An HTTP answer, how long the request was on the wire, and its `retry-after` header if any.
        case answered(status: Int, body: [UInt8], wireMicros: Int64, retryAfter: String? = nil)
        /// The server never processed it (REFUSED_STREAM, a stream above a GOAWAY's last stream id, a
        /// request never sent because its connection closed first): safe to send again at once.
        case unprocessed(reason: String, overload: Bool)
        /// No answer. `sent`: it had gone out, so the service may have delivered it (ambiguous).
        case failed(reason: String, sent: Bool)
    }

    package let id: Int
    package let result: Result
    /// Times the HTTP client sent the request again on its own (libcurl 7.88 does; counted and logged).
    package var resends = 0

    package init(id: Int, result: Result, resends: Int = 0) {
        self.id = id
        self.result = result
        self.resends = resends
    }
}
