import Dispatch
import Foundation
import Logging
import ProviderKit
import PushCore
import Synchronization

/// One lane of an app's credential: a thread of its own that sends every request and applies the retry
/// rules of docs/transport.md and of the service to every answer, over an HTTP/2 driver (our own nghttp2 sessions, or
/// libcurl multi, as the provider chooses). It knows no push service: a `PushService` (a provider module's) says how
/// a request looks and what an answer means; the scheduler keeps the policy: ready and delayed queues, retries and
/// backoff, expiry, the ownership fence, the concurrency limiter, the credential pause and waits, readiness,
/// deadlines counted from when a request is on the wire, metric batching. It hands final outcomes to `sink`
/// in batches, so no per-token work crosses into Swift concurrency.
///
/// This file holds its state; the work is in extensions, one concern each: `Scheduler+Intake` (what other threads
/// hand it), `+Loop` (the thread's turn and its sleep), `+Starting` (admission, the fence, expiry), `+Completions`
/// (what an answer means), `+Deadlines` (timeouts and limits), `+Credential` (the pause and readiness),
/// `+Isolation` (the wait board) and `+Metrics` (what it reports).
public final class Scheduler: LaneWaking, @unchecked Sendable {
    // Shared with submitters: guarded by `intake`. Everything else below is confined to the thread.
    struct Intake: ~Copyable {
        /// Submitted batches as they came: appending a batch retains one array, where appending its jobs would
        /// retain every string and array of every job, on a thread other than the one that made them.
        var batches: [[PushJob]] = []
        /// Running, draining, aborting or ended (`IntakePhase`).
        var phase = IntakePhase<CheckedContinuation<Void, Never>>.running
    }

    let intake = Locked(Intake())
    let settings: TransportSettings
    let service: any PushService
    /// The service's `batchLimit`, read once: the most tokens one request carries.
    let batchLimit: Int
    /// The service's `headerLifetimeMillis`, read once (at least 1 ms: it divides the clock).
    let headerLifetimeMillis: Int64?
    /// Whether the app has a rate limit (`TransportSettings.rateLimit`), read once: the lanes without one (those
    /// of most services) never touch the shared limit object, whose reference count every lane's thread would
    /// otherwise write per request.
    let rateLimited: Bool
    let sink: @Sendable ([Resolution]) -> Void
    let driver: any TransportDriver
    /// Every time the policy reads comes from here (`TransportSettings.clock`).
    let clock: SchedulerClock
    /// Tokens accepted and not yet final, across all jobs: what a drain waits for.
    public let outstanding = Atomic<Int>(0)
    /// Requests the HTTP client sent again on its own, unasked (libcurl; reason `ResentByLibcurl`).
    public let resentByLibcurl = Atomic<Int>(0)
    /// Requests sent again because the server never processed them (refused streams, GOAWAY).
    public let resentUnprocessed = Atomic<Int>(0)
    /// Requests sent again after their connection died before the answer: the server may have had them
    /// (ambiguous, retry reason `ConnectionLost`).
    public let resentAfterConnectionLoss = Atomic<Int>(0)
    /// Tokens of requests the service may have had without answering (timed out after they were written, or cut
    /// after they were sent), sent again: the only duplicates the scheduler's own timing can make.
    public let possiblyDuplicated = Atomic<Int>(0)
    let readiness: Readiness?
    let logger: Logger?
    let metrics: ServiceMetrics
    /// Whether the service refuses the credential, shared by the lanes of one credential.
    let credential: CredentialState
    /// Whether this worker still owns its claims (ownership fencing): copied when its revision changes.
    let lease: OwnershipLease
    var leaseRevision = -1
    var leaseValidUntil: [UInt64] = []
    var revoked: Set<UInt64> = []
    /// Requests whose shard's lease has lapsed: sent only once the heartbeat renews it, dropped if revoked.
    var held: [PendingRequest] = []

    // Thread-confined state. The transport thread touches it one access at a time (no closure holds an access
    // while calling out), so the per-request fields skip the runtime exclusivity check, `@exclusivity(unchecked)`:
    // the checks were 4% of this thread (perf, with the HTTP/2 client's and the driver's).
    @exclusivity(unchecked) var inFlight: [InFlight?] = []
    @exclusivity(unchecked) var freeIDs: [Int] = []
    @exclusivity(unchecked) var active = 0
    /// Requests ready to start, chat before bulk (`ReadyQueues`).
    @exclusivity(unchecked) var ready = ReadyQueues<PendingRequest>()
    /// Bulk requests in flight: below a tenth of the active limit, bulk's next request goes first.
    @exclusivity(unchecked) var bulkActive = 0
    /// Bulk requests in flight at most: a limiter of their own that keeps the servers' latency near its best
    /// (no latency floor), so that what bulk has on the wire never makes a chat request queue at the server
    /// (a server slower than its streams queues every request it accepted, chat ones behind bulk ones).
    @exclusivity(unchecked) var bulkLimiter = ConcurrencyLimiter()
    var bulkActiveLimit: Int
    var bulkAllowed: Bool { bulkActive < bulkActiveLimit }
    var bulkBelowFloor: Bool { bulkActive < max(1, activeLimit / 10) }
    var delayed = DelayedQueue<PendingRequest>()
    @exclusivity(unchecked) var completions: [DriverCompletion] = []
    @exclusivity(unchecked) var resolutions: [Resolution] = []
    @exclusivity(unchecked) var resolvedTokens = 0
    /// Answers and retries since the last flush to the metrics, counted here so the thread touches the
    /// shared counters once per batch rather than once per request.
    @exclusivity(unchecked) var answerCounts: [AnswerKey: Int] = [:]
    /// 200s, nearly every answer, counted apart: no key to build and hash per answer.
    @exclusivity(unchecked) var answered200 = 0
    @exclusivity(unchecked) var retryCounts: [String: Int] = [:]
    /// Requests in flight at most (`ConcurrencyLimiter`): every stream the servers allow (with nghttp2 the sum
    /// of the open connections' SETTINGS_MAX_CONCURRENT_STREAMS; libcurl cannot see them, `maxActiveRequests`
    /// bounds it there), less after what signals overload (429, 503, refused streams, timeouts) or latency
    /// that shows queueing: a server may advertise more streams than it can answer in time (a slow or
    /// overloaded node of the service, the emulator on two busy cores), and filling them all would only turn its
    /// queueing into timeouts and duplicates.
    var activeLimit: Int
    @exclusivity(unchecked) var limiter = ConcurrencyLimiter()
    /// Requests held while the service refuses the credential, then probed (`CredentialPause`).
    var pause: CredentialPause
    var lastDeadlineScan: UInt64 = 0
    var lastStreamsLimit: Int?
    var lastActive = 0
    /// The credential for the requests of one `startRequests` pass, read on its first request: reading it
    /// per request took the token's lock and the wall clock each time. A renewal (after 50 minutes, or an
    /// ExpiredProviderToken answer) is picked up by the next pass, a loop iteration later.
    @exclusivity(unchecked) var passAuthorization: Authorization?
    /// Why the service's credential cannot be had just now (`Authorization.wait`), said once per spell.
    var waitingForCredential: String?
    /// Why the endpoint cannot be reached (a request failed before it was sent while no connection was open: a
    /// refused or timed-out connect, a TLS failure), until an answer comes: a connection that opens (or is
    /// being opened) proves nothing yet. While the lane holds work that waits for the endpoint, that work waits
    /// for the endpoint, not for room (isolation); the lane's own retries are its probes.
    var unreachable: String?
    /// The recent average time an answer took on the wire (microseconds, over about the last 16 answers): only a
    /// lane whose answers take over a tenth of the request timeout, or that waits for its rate, can be busy.
    var recentLatencyMicros: Int64 = 0
    /// Isolation's measure of progress (`Scheduler+Isolation`): tokens settled since `settledSince`, the rate
    /// measured over the last second or more (-1: not yet), how long the oldest request has been on the wire, and
    /// whether the lane said it is busy (so that it stops only at half the window: no flapping).
    var settledSinceMeasure = 0
    var settledSince: UInt64 = 0
    var settledPerSecond = -1
    var oldestOnWireNanos: UInt64 = 0
    var busyReported = false
    /// Until when nothing starts because the app's rate limit is spent (`TransportSettings.rateLimit`); nil while
    /// it is not.
    var rateWaitUntil: UInt64?
    /// While the tokens of one request are settled: when the first of them that retried comes due, which the
    /// others take too, so that they go again together as one request (each token's own jitter would scatter a
    /// batch into requests of one token).
    var requestRetryDue: UInt64?
    var settlingRequest = false
    /// The wall clock, read once per batch of completions and only if an answer carries `enqueued_at`.
    var batchNowMillis: Int64?
    static let deadlineScanNanos: UInt64 = 50_000_000
    /// The longest one answer may hold a whole service (a project's 429), whatever it asks.
    static let longestHoldMillis: Int64 = 3_600_000
    /// The longest a spent daily quota holds an app: a day and an hour (a vendor's day, and a clock a little off).
    static let longestQuotaWaitMillis: Int64 = 90_000_000
    /// Times in a row a request the server never processed (a refused stream, a stream above a GOAWAY, a
    /// request not sent) goes again at once without spending an attempt. The next such one spends an attempt
    /// and waits its retry backoff: a server that refuses everything ends in the retry budget, not in a loop.
    static let freeResendsInARow = 3
    /// At most one notice per this interval about requests that used up their free re-sends.
    static let unprocessedNoticeNanos: UInt64 = 5_000_000_000
    /// Requests that used up their free re-sends since the last notice, and when that notice was.
    var unprocessedSinceNotice = 0
    var lastUnprocessedNoticeAt: UInt64?

    struct AnswerKey: Hashable {
        var status: Int
        var reason: String
    }

    struct PendingRequest {
        var job: JobContext
        var token: Int
        var attempt: Int
        /// Free re-sends in a row since its attempt began (`freeResendsInARow`).
        var unprocessedInARow = 0
    }

    struct InFlight {
        var request: PendingRequest
        /// A batch's other tokens (a service that takes a list), each its own pending request; empty for one.
        var batch: [PendingRequest]
        /// `request` and `batch` as the request listed them.
        var tokens: RequestTokens
        var generation: Int
        var startedAt: UInt64
    }

    /// A lane of a provider's service, over the driver `settings.driver` names.
    public convenience init(settings: TransportSettings, service: any PushService, readiness: Readiness? = nil, logger: Logger? = nil,
                            credential: CredentialState = CredentialState(), lease: OwnershipLease = .unfenced(),
                            sink: @escaping @Sendable ([Resolution]) -> Void) throws {
        try self.init(settings: settings, service: service, readiness: readiness, logger: logger, credential: credential,
                      lease: lease, driver: nil, sink: sink)
    }

    /// `driver`: a driver of the caller's instead of the one `settings.driver` names (tests).
    package init(settings: TransportSettings, service: any PushService, readiness: Readiness? = nil, logger: Logger? = nil,
         credential: CredentialState = CredentialState(), lease: OwnershipLease = .unfenced(),
         driver injected: (any TransportDriver)?, sink: @escaping @Sendable ([Resolution]) -> Void) throws {
        self.settings = settings
        self.clock = SchedulerClock(settings.clock)
        self.lease = lease
        self.credential = credential
        self.readiness = readiness
        self.logger = logger
        self.service = service
        self.batchLimit = max(1, service.batchLimit)
        self.headerLifetimeMillis = service.headerLifetimeMillis.map { max(1, $0) }
        self.rateLimited = !settings.rateLimit.isUnlimited
        self.metrics = service.metrics
        self.sink = sink
        if let injected {
            driver = injected
        } else {
            switch settings.driver {
            case .libcurl:
                driver = CurlDriver(settings: settings, service: service, logger: logger)
            case .nghttp2 where settings.fallsBackToHTTP1 && !settings.offersHTTP2:
                // HTTP/1.1 alone (a deployment that must not speak h2): libcurl's pool from the start.
                var http1 = settings
                http1.driver = .libcurl
                driver = CurlDriver(settings: http1, service: service, logger: logger)
            case .nghttp2 where settings.fallsBackToHTTP1:
                driver = try HTTP1FallbackDriver(settings: settings, service: service, logger: logger)
            case .nghttp2:
                driver = try NGHTTP2Driver(settings: settings, service: service, logger: logger)
            }
        }
        activeLimit = max(1, min(settings.initialActiveRequests, settings.maxActiveRequests))
        pause = CredentialPause(firstNanos: UInt64(max(1, settings.credentialProbeFirstMillis)) * 1_000_000,
                                longestNanos: UInt64(max(1, settings.credentialProbeLongestMillis)) * 1_000_000)
        limiter.limit = activeLimit
        limiter.latencyFloorMicros = Int64(settings.requestTimeoutMillis) * 100
        // Our own sessions never open more streams than the servers' SETTINGS allow: no slow start below them. (Nor
        // after a fall back to HTTP/1.1: libcurl starts a request only on a connection of its own, so what waits for
        // one waits outside the deadline while the pool grows. A lane on HTTP/1.1 alone from the start keeps the slow
        // start it always had.)
        if settings.driver == .nghttp2 && (!settings.fallsBackToHTTP1 || settings.offersHTTP2) { limiter.startAtMaximum() }
        bulkActiveLimit = activeLimit
        bulkLimiter.limit = activeLimit
        bulkLimiter.latencyFloorMicros = 0
        let thread = Thread { [self] in self.loop() }
        thread.name = "\(service.name.lowercased())-scheduler"
        thread.start()
    }

    let driverStats = Locked<DriverStats>(DriverStats())

    struct DriverStats {
        var connections = 0
        var streams: Int?
        var active = 0
        var peakActive = 0
        var limit = 0
        var overloadBackoffs = 0
    }
}
