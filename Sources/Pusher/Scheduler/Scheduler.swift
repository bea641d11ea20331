import Dispatch
import Foundation
import Logging
import PushCore
import Synchronization

/// One lane of an app's credential: a thread of its own that sends every request and applies the retry
/// rules of docs/transport.md and docs/fcm.md to every answer, over an HTTP/2 driver (our own nghttp2 sessions, or
/// libcurl multi for APNs). It knows no push service: a `PushService` (APNs, FCM) says how a request looks
/// and what an answer means; the scheduler keeps the policy: ready and delayed queues, retries and backoff,
/// expiry, the ownership fence, the concurrency limiter, the credential pause and waits, readiness,
/// deadlines counted from when a request is on the wire, metric batching. It hands final outcomes to `sink`
/// in batches, so no per-token work crosses into Swift concurrency.
public final class Scheduler: @unchecked Sendable {
    // Shared with submitters: guarded by `intake`. Everything else below is confined to the thread.
    private struct Intake: ~Copyable {
        /// Submitted batches as they came: appending a batch retains one array, where appending its jobs would
        /// retain every string and array of every job, on a thread other than the one that made them.
        var batches: [[PushJob]] = []
        var finishing = false
        var aborting = false
        /// The thread has ended: nothing will resume a drain waiter any more.
        var exited = false
        var drained: [CheckedContinuation<Void, Never>] = []
    }

    private let intake = Locked(Intake())
    private let settings: TransportSettings
    private let service: any PushService
    private let sink: @Sendable ([Resolution]) -> Void
    private let driver: any TransportDriver
    /// Every time the policy reads comes from here (`TransportSettings.clock`).
    private let clock: SchedulerClock
    /// Tokens accepted and not yet final, across all jobs: what a drain waits for.
    public let outstanding = Atomic<Int>(0)
    /// Requests the HTTP client sent again on its own, unasked (libcurl; reason `ResentByLibcurl`).
    public let resentByLibcurl = Atomic<Int>(0)
    /// Requests sent again because the server never processed them (refused streams, GOAWAY).
    public let resentUnprocessed = Atomic<Int>(0)
    /// Requests sent again after their connection died before the answer: the server may have had them
    /// (ambiguous, retry reason `ConnectionLost`).
    public let resentAfterConnectionLoss = Atomic<Int>(0)
    private let readiness: Readiness?
    private let logger: Logger?
    private let metrics: ServiceMetrics
    /// Whether the service refuses the credential, shared by the lanes of one credential.
    private let credential: CredentialState
    /// Whether this worker still owns its claims (ownership fencing): copied when its revision changes.
    private let lease: OwnershipLease
    private var leaseRevision = -1
    private var leaseValidUntil: [UInt64] = []
    private var revoked: Set<UInt64> = []
    /// Requests whose shard's lease has lapsed: sent only once the heartbeat renews it, dropped if revoked.
    private var held: [PendingRequest] = []

    // Thread-confined state. The transport thread touches it one access at a time (no closure holds an access
    // while calling out), so the per-request fields skip the runtime exclusivity check, `@exclusivity(unchecked)`:
    // the checks were 4% of this thread (perf, with the HTTP/2 client's and the driver's).
    @exclusivity(unchecked) private var inFlight: [InFlight?] = []
    @exclusivity(unchecked) private var freeIDs: [Int] = []
    @exclusivity(unchecked) private var active = 0
    /// Requests ready to start, chat before bulk (`ReadyQueues`).
    @exclusivity(unchecked) private var ready = ReadyQueues<PendingRequest>()
    /// Bulk requests in flight: below a tenth of the active limit, bulk's next request goes first.
    @exclusivity(unchecked) private var bulkActive = 0
    /// Bulk requests in flight at most: a limiter of their own that keeps the servers' latency near its best
    /// (no latency floor), so that what bulk has on the wire never makes a chat request queue at the server
    /// (a server slower than its streams queues every request it accepted, chat ones behind bulk ones).
    @exclusivity(unchecked) private var bulkLimiter = ConcurrencyLimiter()
    private var bulkActiveLimit: Int
    private var bulkAllowed: Bool { bulkActive < bulkActiveLimit }
    private var bulkBelowFloor: Bool { bulkActive < max(1, activeLimit / 10) }
    private var delayed = DelayedQueue<PendingRequest>()
    @exclusivity(unchecked) private var completions: [DriverCompletion] = []
    @exclusivity(unchecked) private var resolutions: [Resolution] = []
    @exclusivity(unchecked) private var resolvedTokens = 0
    /// Answers and retries since the last flush to the metrics, counted here so the thread touches the
    /// shared counters once per batch rather than once per request.
    @exclusivity(unchecked) private var answerCounts: [AnswerKey: Int] = [:]
    /// 200s, nearly every answer, counted apart: no key to build and hash per answer.
    @exclusivity(unchecked) private var answered200 = 0
    @exclusivity(unchecked) private var retryCounts: [String: Int] = [:]
    /// Requests in flight at most (`ConcurrencyLimiter`): every stream the servers allow (with nghttp2 the sum
    /// of the open connections' SETTINGS_MAX_CONCURRENT_STREAMS; libcurl cannot see them, `maxActiveRequests`
    /// bounds it there), less after what signals overload (429, 503, refused streams, timeouts) or latency
    /// that shows queueing: a server may advertise more streams than it can answer in time (a slow or
    /// overloaded APNs node, the emulator on two busy cores), and filling them all would only turn its
    /// queueing into timeouts and duplicates.
    private var activeLimit: Int
    @exclusivity(unchecked) private var limiter = ConcurrencyLimiter()
    /// Requests held while APNs refuses the credential, then probed (`CredentialPause`).
    private var pause: CredentialPause
    private var lastDeadlineScan: UInt64 = 0
    private var lastStreamsLimit: Int?
    private var lastActive = 0
    /// The credential for the requests of one `startRequests` pass, read on its first request: reading it
    /// per request took the token's lock and the wall clock each time. A renewal (after 50 minutes, or an
    /// ExpiredProviderToken answer) is picked up by the next pass, a loop iteration later.
    @exclusivity(unchecked) private var passAuthorization: Authorization?
    /// Why the service's credential cannot be had just now (`Authorization.wait`), said once per spell.
    private var waitingForCredential: String?
    /// Why the endpoint cannot be reached (a request failed before it was sent while no connection was open: a
    /// refused or timed-out connect, a TLS failure), until a connection opens or an answer comes. Its work then
    /// waits for the endpoint, not for room (isolation).
    private var unreachable: String?
    /// The recent average time an answer took on the wire (microseconds, over about the last 16 answers). A
    /// lane whose answers take longer than a tenth of the request timeout while requests wait for a stream is
    /// slow: the work it cannot start yet waits for the endpoint, not for room (isolation).
    private var recentLatencyMicros: Int64 = 0
    /// The wall clock, read once per batch of completions and only if an answer carries `enqueued_at`.
    private var batchNowMillis: Int64?
    static let deadlineScanNanos: UInt64 = 50_000_000
    /// The longest one answer may hold a whole service (an FCM project's 429), whatever it asks.
    static let longestHoldMillis: Int64 = 3_600_000
    /// Times in a row a request the server never processed (a refused stream, a stream above a GOAWAY, a
    /// request not sent) goes again at once without spending an attempt. The next such one spends an attempt
    /// and waits its retry backoff: a server that refuses everything ends in the retry budget, not in a loop.
    static let freeResendsInARow = 3
    /// At most one notice per this interval about requests that used up their free re-sends.
    static let unprocessedNoticeNanos: UInt64 = 5_000_000_000
    /// Requests that used up their free re-sends since the last notice, and when that notice was.
    private var unprocessedSinceNotice = 0
    private var lastUnprocessedNoticeAt: UInt64?

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
        var generation: Int
        var startedAt: UInt64
    }

    /// An APNs lane: a provider token (JWT), or none with a client certificate.
    public convenience init(settings: TransportSettings, provider: ProviderToken?, readiness: Readiness? = nil, logger: Logger? = nil,
                            credential: CredentialState = CredentialState(), lease: OwnershipLease = .unfenced(),
                            sink: @escaping @Sendable ([Resolution]) -> Void) throws {
        try self.init(settings: settings, service: APNsService(provider: provider), readiness: readiness, logger: logger,
                      credential: credential, lease: lease, sink: sink)
    }

    /// `driver`: a driver of the caller's instead of the one `settings.driver` names (tests).
    init(settings: TransportSettings, service: any PushService, readiness: Readiness? = nil, logger: Logger? = nil,
         credential: CredentialState = CredentialState(), lease: OwnershipLease = .unfenced(),
         driver injected: (any TransportDriver)? = nil, sink: @escaping @Sendable ([Resolution]) -> Void) throws {
        self.settings = settings
        self.clock = SchedulerClock(settings.clock)
        self.lease = lease
        self.credential = credential
        self.readiness = readiness
        self.logger = logger
        self.service = service
        self.metrics = service.metrics
        self.sink = sink
        if let injected {
            driver = injected
        } else {
            switch settings.driver {
            case .libcurl:
                driver = CurlDriver(settings: settings, service: service, logger: logger)
            case .nghttp2:
                driver = try NGHTTP2Driver(settings: settings, service: service, logger: logger)
            }
        }
        activeLimit = max(1, min(settings.initialActiveRequests, settings.maxActiveRequests))
        pause = CredentialPause(firstNanos: UInt64(max(1, settings.credentialProbeFirstMillis)) * 1_000_000,
                                longestNanos: UInt64(max(1, settings.credentialProbeLongestMillis)) * 1_000_000)
        limiter.limit = activeLimit
        limiter.latencyFloorMicros = Int64(settings.requestTimeoutMillis) * 100
        // Our own sessions never open more streams than the servers' SETTINGS allow: no slow start below them.
        if settings.driver == .nghttp2 { limiter.startAtMaximum() }
        bulkActiveLimit = activeLimit
        bulkLimiter.limit = activeLimit
        bulkLimiter.latencyFloorMicros = 0
        let thread = Thread { [self] in self.loop() }
        thread.name = "\(service.name.lowercased())-scheduler"
        thread.start()
    }

    /// Open HTTP/2 connections to the service.
    public var openConnections: Int { driverStats.withLock { $0.connections } }
    /// The servers' SETTINGS_MAX_CONCURRENT_STREAMS summed over this lane's connections (nil: unknown).
    public var streamsLimit: Int? { driverStats.withLock { $0.streams } }
    /// Requests in flight, the most there were at once, and how many may be (the limiter's limit), as of the last
    /// deadline scan (every 50 ms).
    public var requestsInFlight: (now: Int, peak: Int, limit: Int) {
        driverStats.withLock { ($0.active, $0.peakActive, $0.limit) }
    }
    /// How often the limiter cut the limit for overload signals (429/503 answers, refused streams, GOAWAYs naming
    /// an error, timeouts), as of the last deadline scan.
    public var overloadBackoffs: Int { driverStats.withLock { $0.overloadBackoffs } }
    private let driverStats = Locked<DriverStats>(DriverStats())

    private struct DriverStats {
        var connections = 0
        var streams: Int?
        var active = 0
        var peakActive = 0
        var limit = 0
        var overloadBackoffs = 0
    }

    /// Hands jobs to the transport; returns at once.
    public func submit(_ jobs: [PushJob]) {
        let tokens = jobs.reduce(0) { $0 + $1.tokens.count }
        outstanding.add(tokens, ordering: .relaxed)
        intake.withLock { $0.batches.append(jobs) }
        driver.wake()
    }

    /// Returns when every submitted token has a final outcome; the thread then ends.
    public func finish() async {
        await withCheckedContinuation { continuation in
            let exited = intake.withLock { state -> Bool in
                state.finishing = true
                if !state.exited { state.drained.append(continuation) }
                return state.exited
            }
            if exited {
                continuation.resume()  // aborted before the drain began
            } else {
                driver.wake()
            }
        }
    }

    /// Something the thread waits for changed (a credential became available): it looks again at once.
    public func wake() {
        driver.wake()
    }

    /// Drops whatever is in flight (its messages stay claimed in Redis) and ends the thread.
    public func abort() {
        intake.withLock { $0.aborting = true }
        driver.wake()
    }

    // MARK: the transport thread

    private func loop() {
        // This thread writes every socket of its service: a reset connection must fail the write, not end the process.
        BrokenPipes.blockOnThisThread()
        while true {
            // Swapped straight into a variable of its own: a copy would give each batch two owners, and moving
            // the jobs out (`admit`) would then copy them.
            var batches: [[PushJob]] = []
            let (finishing, aborting) = intake.withLock { state in
                swap(&batches, &state.batches)
                return (state.finishing, state.aborting)
            }
            if aborting { break }
            for index in batches.indices {
                var batch: [PushJob] = []
                swap(&batch, &batches[index])
                admit(&batch)
            }
            let now = clock.uptimeNanoseconds
            while let due = delayed.popDue(now: now) { ready.append(due, lane: due.job.lane) }
            refreshLease()
            let room = startRequests()

            completions.removeAll(keepingCapacity: true)
            driver.process(into: &completions)
            batchNowMillis = nil
            for completion in completions { complete(completion) }
            let scanTime = clock.uptimeNanoseconds
            if scanTime &- lastDeadlineScan >= Self.deadlineScanNanos { scanDeadlines(now: scanTime) }
            if !resolutions.isEmpty {
                let batch = resolutions
                resolutions.removeAll(keepingCapacity: true)
                outstanding.subtract(resolvedTokens, ordering: .relaxed)
                resolvedTokens = 0
                sink(batch)
            }
            if answered200 > 0 || !answerCounts.isEmpty || !retryCounts.isEmpty { flushMetrics() }
            if finishing && active == 0 && ready.isEmpty && delayed.isEmpty && held.isEmpty
                && intake.withLock({ $0.batches.isEmpty }) {
                break
            }
            let waiting = ready.hasStartable(bulkAllowed: bulkAllowed || bulkBelowFloor)
            // Work waits for a stream: the driver may open another connection, unless answers already queue (more
            // streams would then add latency, not throughput).
            driver.noteWaitingWork(waiting && room == 0 && !pause.paused && !limiter.queueing)
            driver.wait(timeoutMillis: waitMillis(now: clock.uptimeNanoseconds, waiting: waiting))
        }
        shutdown()
    }

    /// Takes a batch's jobs in, in the order they came. Each job is moved out of the batch (`popLast` hands over
    /// the job itself, where iterating copies it and retains every string and array of it once more, on this
    /// thread, of objects another thread made); reversed first, in place, so that the last is the first.
    /// Reversed through the buffer: its `swapAt` moves the elements, where the array's own copies each job
    /// and destroys the old one (perf showed that copy at 3% of this thread).
    private func admit(_ batch: inout [PushJob]) {
        batch.withUnsafeMutableBufferPointer { $0.reverse() }
        while let job = batch.popLast() {
            let context = JobContext(job: job)  // the job's last use: moved, not copied
            for index in context.job.tokens.indices {
                ready.append(PendingRequest(job: context, token: index, attempt: 1), lane: context.lane)
            }
        }
    }

    /// How long the thread may sleep: until the next retry is due, the pause lets a probe out, or the next
    /// deadline scan; not at all when requests are ready and may start.
    private func waitMillis(now: UInt64, waiting: Bool) -> Int32 {
        var timeout: UInt64 = Self.deadlineScanNanos / 1_000_000
        if let soonest = delayed.soonest {
            timeout = min(timeout, soonest > now ? (soonest - now + 999_999) / 1_000_000 : 0)
        }
        if let holdUntil = credential.holdUntil(now: now) {
            timeout = min(timeout, (holdUntil - now + 999_999) / 1_000_000)
        } else if waiting && active < activeLimit {
            if let wait = pause.waitNanos(now: now) {
                timeout = min(timeout, wait / 1_000_000 + 1)
            } else if !pause.paused && waitingForCredential == nil && driver.room(limit: activeLimit - active) > 0 {
                // (While no credential can be had the thread sleeps: the credential's change wakes it, `wake()`.)
                timeout = 0
            }
        }
        return Int32(timeout)
    }

    /// Starts ready requests while the driver has room; returns the room left.
    private func startRequests() -> Int {
        passAuthorization = nil
        // The service (an FCM project after a 429) is held back until the time it named.
        if credential.holdUntil(now: clock.uptimeNanoseconds) != nil { return driver.room(limit: activeLimit - active) }
        var allowance = pause.allowance(now: pause.paused ? clock.uptimeNanoseconds : 0, active: active)
        var room = driver.room(limit: activeLimit - active)
        while room > 0 && allowance > 0,
              let request = ready.popNext(bulkBelowFloor: bulkBelowFloor, bulkAllowed: bulkAllowed) {
            guard start(request) else {
                if pause.paused { allowance = 0 }  // the credential cannot sign: held, and the pause decides
                if waitingForCredential != nil { break }  // no credential yet: the rest wait with it
                continue
            }
            room -= 1
            if pause.paused {
                pause.probeStarted()
                allowance -= 1
            }
        }
        return room
    }

    /// Copies the lease when it changed; held requests then get checked again.
    private func refreshLease() {
        let revision = lease.revision.load(ordering: .acquiring)
        guard revision != leaseRevision else { return }
        leaseRevision = revision
        (leaseValidUntil, revoked) = lease.snapshot()
        if !held.isEmpty {
            ready.append(contentsOf: held.map { ($0, $0.job.lane) })
            held.removeAll(keepingCapacity: true)
        }
    }

    private enum Fence { case send, hold, drop }

    /// Ownership fencing: a request is held while the lease of any of its messages' shards has lapsed, and
    /// dropped when every message it serves was taken over by another worker.
    private func fence(_ request: PendingRequest, now: UInt64) -> Fence {
        let context = request.job  // the job read in place, not copied
        let primary = context.job.firstOwner(ofToken: request.token)
        if context.job.extraOwners.isEmpty {
            if now >= leaseValidUntil[min(PipelineSeq.shard(of: primary), leaseValidUntil.count - 1)] { return .hold }
            return revoked.isEmpty || !revoked.contains(primary) ? .send : .drop
        }
        var live = false
        for seq in context.job.owners(ofToken: request.token) {
            if now >= leaseValidUntil[min(PipelineSeq.shard(of: seq), leaseValidUntil.count - 1)] { return .hold }
            if !revoked.contains(seq) { live = true }
        }
        return live ? .send : .drop
    }

    /// Hands one request to the driver; false if it was resolved or held instead.
    private func start(_ request: PendingRequest) -> Bool {
        let now = clock.uptimeNanoseconds
        switch fence(request, now: now) {
        case .send:
            break
        case .hold:
            held.append(request)
            return false
        case .drop:
            resolve(request, .claimLost)
            return false
        }
        // The wall clock only for the few requests that carry an expiration.
        if request.job.job.headers.expiresAtATime,
           request.job.job.headers.isExpired(nowSeconds: clock.wallSeconds) {
            resolve(request, .failed(reason: "Expired", status: nil, attempts: request.attempt - 1))
            return false
        }
        var bearer: String?
        var generation = 0
        let authorization: Authorization
        if let passAuthorization {
            authorization = passAuthorization
        } else {
            authorization = service.authorization()
            passAuthorization = authorization
            noteCredentialWait(authorization)
        }
        switch authorization {
        case .none:
            break
        case .bearer(let token, let tokenGeneration):
            bearer = token
            generation = tokenGeneration
        case .wait:
            // No credential can be had just now: the request waits at the front, no attempt spent.
            ready.prepend(request, lane: request.job.lane)
            return false
        case .refused(let reason):
            // A credential that cannot be had is the app's problem like a refused one: pause, dead-letter nothing.
            if pause.paused { pause.probeStarted() }
            let (word, detail) = Self.split(reason)
            refuseCredential(request, reason: word, detail: detail)
            return false
        }
        let id: Int
        if let free = freeIDs.popLast() {
            id = free
        } else {
            id = inFlight.count
            inFlight.append(nil)
        }
        inFlight[id] = InFlight(request: request, generation: generation, startedAt: now)
        active += 1
        if request.job.lane == .bulk { bulkActive += 1 }
        driver.start(DriverRequest(id: id, job: request.job, token: request.token, bearer: bearer, generation: generation, now: now))
        return true
    }

    /// Takes a request out of the in-flight table (moved out: no retain and release of what it holds).
    private func finished(_ id: Int) -> InFlight? {
        guard id >= 0, id < inFlight.count, let entry = inFlight[id].take() else { return nil }
        freeIDs.append(id)
        active -= 1
        if entry.request.job.lane == .bulk { bulkActive -= 1 }
        return entry
    }

    private func complete(_ completion: DriverCompletion) {
        guard let entry = finished(completion.id) else { return }
        if completion.resends > 0 { noteResends(completion.resends, result: completion.result) }
        let request = entry.request
        switch completion.result {
        case .answered(let status, let body, let wireMicros, let retryAfter):
            unreachable = nil
            recentLatencyMicros += (max(0, min(wireMicros, 3_600_000_000)) - recentLatencyMicros) / 16
            let (decision, answerReason) = service.classify(status: status, body: body, retryAfter: retryAfter)
            metrics.requestDuration.recordMicroseconds(max(0, wireMicros))
            limiter.observe(latencyMicros: wireMicros)
            bulkLimiter.observe(latencyMicros: wireMicros)
            if status == 429 || status == 503 { limiter.observeOverload(answered: true) }
            if let enqueued = request.job.job.enqueuedAtMillis {
                let now = batchNowMillis ?? clock.wallMillis
                batchNowMillis = now
                let waited = now - enqueued
                if waited >= 0 { metrics.queueToService(request.job.lane).recordMilliseconds(waited) }
            }
            if status == 200 {
                answered200 += 1
            } else {
                answerCounts[AnswerKey(status: status, reason: answerReason), default: 0] += 1
            }
            if case .credentialRefused(let reason) = decision {
                refuseCredential(request, reason: reason, detail: nil)
            } else if case .renewAndResend(let reason) = decision, request.unprocessedInARow < Self.freeResendsInARow {
                // The credential was rejected before the message was looked at: a new one, and the request
                // goes again at once without spending an attempt (bounded like any unprocessed re-send).
                service.renew(generation: entry.generation)
                retryCounts[reason, default: 0] += 1
                var again = request
                again.unprocessedInARow += 1
                ready.append(again, lane: request.job.lane)
            } else {
                noteAccepted(status: status)
                notePauseAnswer(status: status)
                apply(decision, to: request, status: status, generation: entry.generation)
            }
        case .unprocessed(let reason, let overload):
            notePauseAnswer(status: nil)
            // Refused by the server, or cut by a GOAWAY naming an error; not a graceful GOAWAY (a rotation), nor a
            // request that merely found no stream or connection.
            if overload { limiter.observeOverload(answered: false) }
            guard request.unprocessedInARow < Self.freeResendsInARow else {
                // Not processed again and again: the server refuses everything (or goes away on every
                // connection). This one spends an attempt and backs off like any retry.
                noteUsedUpFreeResends(reason: reason)
                apply(.retry(reason: reason), to: request, status: nil, generation: entry.generation)
                return
            }
            // Never processed by the server: again at once, no attempt spent, no duplicate possible.
            retryCounts[reason, default: 0] += 1
            resentUnprocessed.add(1, ordering: .relaxed)
            if let logger, logger.logLevel <= .debug {
                logger.debug("\(service.name) request not processed by the server: sent again", metadata: [
                    "reason": "\(reason)", "attempt": "\(request.attempt)", "app": "\(settings.app)",
                    "token": "\(request.job.job.tokens[request.token].prefix(8))",
                ])
            }
            var again = request
            again.unprocessedInARow += 1
            ready.append(again, lane: request.job.lane)
        case .failed(let reason, let sent):
            if !sent && driver.openConnections == 0 { unreachable = reason }
            answerCounts[AnswerKey(status: 0, reason: reason), default: 0] += 1
            notePauseAnswer(status: nil)
            // Sent on a connection that died before the answer: the service may have it (counted as ambiguous).
            apply(.retry(reason: reason), to: request, status: nil, generation: entry.generation,
                  label: sent ? "ConnectionLost" : nil)
        }
    }

    /// Requests on the wire longer than the request timeout are given up and retried; one that never
    /// reached the wire (a connection that never comes) ends too, much later.
    private func scanDeadlines(now: UInt64) {
        lastDeadlineScan = now
        let timeout = UInt64(settings.requestTimeoutMillis) * 1_000_000
        let stuck = max(timeout * 6, 60_000_000_000)
        var expired: [Int] = []
        for id in inFlight.indices {
            // Only the start time: binding the whole entry retained its job, for every request in flight.
            guard let startedAt = inFlight[id]?.startedAt else { continue }
            if let wire = driver.onWireSince(id: id) {
                if now > wire && now - wire > timeout { expired.append(id) }
            } else if now &- startedAt > stuck {
                expired.append(id)
            }
        }
        for id in expired {
            driver.cancel(id: id)
            guard let entry = finished(id) else { continue }
            answerCounts[AnswerKey(status: 0, reason: "Timeout"), default: 0] += 1
            limiter.observeOverload(answered: false)
            notePauseAnswer(status: nil)
            apply(.retry(reason: "Timeout"), to: entry.request, status: nil, generation: entry.generation)
        }
        let connections = driver.openConnections
        let streams = driver.streamsLimit
        // Requests are started up to the limit whenever some are ready, so ready ones mean the limit binds. The
        // ceiling is what the servers allow now; the driver opens more connections while their streams are full.
        activeLimit = limiter.update(now: now, demand: !ready.isEmpty, maximum: streams ?? settings.maxActiveRequests)
        bulkActiveLimit = bulkLimiter.update(now: now, demand: ready.hasBulk, maximum: activeLimit)
        let (active, limit, backoffs) = (self.active, activeLimit, limiter.overloadBackoffs)
        driverStats.withLock {
            $0.connections = connections
            $0.streams = streams
            $0.active = active
            $0.peakActive = max($0.peakActive, active)
            $0.limit = limit
            $0.overloadBackoffs = backoffs
        }
        if active != lastActive {
            lastActive = active
            credential.requestsInFlightChanged(app: settings.app, lane: settings.lane, requests: active, metrics: metrics)
        }
        if streams != lastStreamsLimit {
            lastStreamsLimit = streams
            credential.streamsLimitChanged(app: settings.app, lane: settings.lane, streams: streams ?? 0, metrics: metrics)
        }
        reportWaiting(now: now)
    }

    /// Tells the wait board (isolation) whether this lane can send and, while it cannot, how many requests it
    /// holds: that work then takes no room from claims, and the app's newly claimed messages are parked.
    private func reportWaiting(now: UInt64) {
        guard let board = settings.waitBoard else { return }
        let reason: String?
        if pause.paused {
            reason = "paused: the service refuses the credential"
        } else if let waitingForCredential {
            reason = "no credential: \(waitingForCredential)"
        } else if credential.holdUntil(now: now) != nil {
            reason = "held: the service asked to slow down"
        } else if let unreachable, driver.openConnections == 0 {
            reason = "unreachable: \(unreachable)"
        } else if !ready.isEmpty && recentLatencyMicros >= Int64(settings.requestTimeoutMillis) * 100 {
            // Requests wait for a stream of an endpoint that answers slowly; the reason stays the same text
            // while it lasts (a change wakes the gate).
            reason = "slow: answers take over \(settings.requestTimeoutMillis / 10) ms"
        } else {
            unreachable = nil
            reason = nil
        }
        board.report(lane: settings.boardLane, waiting: reason != nil, queued: ready.count + delayed.count, reason: reason ?? "")
    }

    private func apply(_ decision: ServiceDecision, to request: PendingRequest, status: Int?, generation: Int,
                       label: String? = nil) {
        switch decision {
        case .delivered:
            resolve(request, .delivered)
        case .feedback(let reason, let timestamp):
            resolve(request, .feedback(reason: reason, timestampMillis: timestamp))
        case .deadLetter(let reason, let detail):
            resolve(request, .failed(reason: reason, status: status, attempts: request.attempt, detail: detail))
        case .retry(let reason, let notBefore, let holdService, let detail):
            if holdService, let notBefore {
                // Capped at an hour: a server's `Retry-After` of a day is no reason to hold a project that long.
                let holdMillis = min(max(0, notBefore), Self.longestHoldMillis)
                let now = clock.uptimeNanoseconds
                let alreadyHeld = credential.holdUntil(now: now) != nil
                if credential.hold(until: now &+ UInt64(holdMillis) &* 1_000_000), !alreadyHeld {
                    // Once per hold, not once per answer of the requests that were in flight when it began.
                    logger?.warning("\(service.name) asks this project to slow down: every request of the app waits \(holdMillis / 1000) s", metadata: [
                        "app": "\(settings.app)", "reason": "\(reason)", "detail": "\(detail ?? "")",
                    ])
                }
            }
            retry(request, reason: reason, status: status, label: label, notBeforeMillis: notBefore, detail: detail)
        case .renewAndRetry(let reason), .renewAndResend(let reason):
            // The service's renewal rules apply (APNs: 20 minutes); if none is allowed, a plain retry.
            service.renew(generation: generation)
            retry(request, reason: reason, status: status, label: label)
        case .credentialRefused(let reason):
            refuseCredential(request, reason: reason, detail: nil)
        }
    }

    private func retry(_ request: PendingRequest, reason: String, status: Int?, label: String?, notBeforeMillis: Int64? = nil,
                       detail: String? = nil) {
        guard request.attempt < settings.retry.maxAttempts else {
            resolve(request, .failed(reason: reason, status: status, attempts: request.attempt, detail: detail))
            return
        }
        retryCounts[label ?? reason, default: 0] += 1
        if label == "ConnectionLost" { resentAfterConnectionLoss.add(1, ordering: .relaxed) }
        var next = request
        next.attempt += 1
        next.unprocessedInARow = 0
        // Never sooner than the server asked (`Retry-After`), capped at an hour.
        let asked = UInt64(min(max(0, notBeforeMillis ?? 0), 3_600_000))
        let delay = max(UInt64(settings.retry.delayMillis(afterAttempt: request.attempt)), asked) * 1_000_000
        if let logger, logger.logLevel <= .debug {
            logger.debug("\(service.name) request retried", metadata: [
                "reason": "\(reason)", "attempt": "\(next.attempt)", "delay_ms": "\(delay / 1_000_000)",
                "token": "\(request.job.job.tokens[request.token].prefix(8))", "app": "\(settings.app)",
            ])
        }
        delayed.insert(next, due: clock.uptimeNanoseconds + delay)
    }

    /// Says (at most once per `unprocessedNoticeNanos`, with a count) that requests keep coming back unprocessed
    /// and now spend attempts: what a server that refuses everything looks like, without a line per request.
    private func noteUsedUpFreeResends(reason: String) {
        unprocessedSinceNotice += 1
        let now = clock.uptimeNanoseconds
        if let last = lastUnprocessedNoticeAt, now < last &+ Self.unprocessedNoticeNanos { return }
        lastUnprocessedNoticeAt = now
        logger?.notice("\(service.name) keeps sending requests back unprocessed (refused streams, GOAWAY): a request not processed \(Self.freeResendsInARow + 1) times in a row spends an attempt and waits its retry backoff", metadata: [
            "app": "\(settings.app)", "lane": "\(settings.lane)", "reason": "\(reason)",
            "requests": "\(unprocessedSinceNotice)",
        ])
        unprocessedSinceNotice = 0
    }

    /// libcurl 7.88 re-sends a request by itself after REFUSED_STREAM or a GOAWAY that did not cover its
    /// stream, or when a reused connection proves dead; a server that had in fact received the first send
    /// may then deliver it twice. Made visible here.
    private func noteResends(_ count: Int, result: DriverCompletion.Result) {
        retryCounts["ResentByLibcurl", default: 0] += count
        resentByLibcurl.add(count, ordering: .relaxed)
        if let logger, logger.logLevel <= .debug {
            logger.debug("libcurl sent a request again on its own (a refused stream, a GOAWAY or a reused connection that had died)", metadata: [
                "app": "\(settings.app)", "times": "\(count)", "result": "\(result)",
            ])
        }
    }

    /// A request refused for the app's credential waits (its attempt not spent) while the app is paused.
    private func refuseCredential(_ request: PendingRequest, reason: String, detail: String?) {
        let now = clock.uptimeNanoseconds
        let started = pause.refused(now: now)
        if started { credential.lanePaused(app: settings.app, metrics: metrics) }
        if credential.refuse(app: settings.app, reason: reason, service: service.name, readiness: readiness) {
            logger?.error("\(service.name) rejects this app's credentials: replace the key, certificate or service account (or fix the clock); sending for this app is paused (nothing is dead-lettered, a probe request goes out every \(settings.credentialProbeFirstMillis) ms to \(settings.credentialProbeLongestMillis / 1000) s) and readiness is false until a request succeeds",
                          metadata: ["app": "\(settings.app)", "reason": "\(reason)", "detail": "\(detail ?? "")",
                                     "endpoint": "\(settings.baseURL)"])
        }
        retryCounts[reason, default: 0] += 1
        if let logger, logger.logLevel <= .debug {
            logger.debug("\(service.name) refused the credential: requests held", metadata: [
                "reason": "\(reason)", "app": "\(settings.app)", "pause_started": "\(started)",
                "next_probe_ms": "\(pause.resumeAt > now ? (pause.resumeAt - now) / 1_000_000 : 0)",
            ])
        }
        ready.append(request, lane: request.job.lane)
    }

    private func notePauseAnswer(status: Int?) {
        guard pause.paused else { return }
        if pause.answered(status: status, now: clock.uptimeNanoseconds) {
            credential.laneResumed(app: settings.app, metrics: metrics)
            logger?.notice("\(service.name) authenticates this app's requests again: sending resumes", metadata: ["app": "\(settings.app)"])
        }
    }

    /// Readiness follows the credential: refused until a request with it is accepted.
    private func noteAccepted(status: Int) {
        guard status == 200 else { return }
        if credential.accept(app: settings.app, readiness: readiness) {
            logger?.notice("\(service.name) accepts this app's credentials again", metadata: ["app": "\(settings.app)"])
        }
    }

    private func flushMetrics() {
        metrics.responses(status: 200, reason: "", count: answered200)
        answered200 = 0
        for (key, count) in answerCounts { metrics.responses(status: key.status, reason: key.reason, count: count) }
        for (reason, count) in retryCounts { metrics.retries(reason: reason, count: count) }
        answerCounts.removeAll(keepingCapacity: true)
        retryCounts.removeAll(keepingCapacity: true)
    }

    private func resolve(_ request: PendingRequest, _ outcome: TokenOutcome) {
        // Read through the context in place: binding `request.job.job` to a constant copied the whole job.
        let context = request.job
        let token = context.job.tokens[request.token]
        resolvedTokens += 1
        context.job.forEachOwner(ofToken: request.token) { resolutions.append(Resolution(seq: $0, token: token, outcome: outcome)) }
    }

    /// Says when the service's credential cannot be had (and readiness says why), and when it can again.
    private func noteCredentialWait(_ authorization: Authorization) {
        if case .wait(let reason) = authorization {
            guard waitingForCredential != reason else { return }
            if waitingForCredential == nil {
                logger?.warning("\(service.name) credential unavailable: the app's requests wait (no attempt spent)", metadata: [
                    "app": "\(settings.app)", "reason": "\(reason)",
                ])
            }
            waitingForCredential = reason
            credential.waiting(app: settings.app, reason: reason, readiness: readiness)
        } else if waitingForCredential != nil {
            waitingForCredential = nil
            credential.waitOver(app: settings.app, readiness: readiness)
            logger?.notice("\(service.name) credential available again: sending resumes", metadata: ["app": "\(settings.app)"])
        }
    }

    /// `Word: detail` as the reason (a metric label, a log field) and its detail.
    static func split(_ reason: String) -> (String, String?) {
        guard let colon = reason.firstIndex(of: ":") else { return (reason, nil) }
        return (String(reason[..<colon]), reason[reason.index(after: colon)...].trimmingCharacters(in: .whitespaces))
    }

    private func shutdown() {
        let (drained, aborting) = intake.withLock { state -> ([CheckedContinuation<Void, Never>], Bool) in
            let list = state.drained
            state.drained = []
            state.exited = true
            return (list, state.aborting)
        }
        flushMetrics()
        // Aborting drops what is in flight: its messages stay claimed and return to the queue.
        let dropped = driver.close()
        if aborting, !dropped.isEmpty {
            logger?.debug("transport aborted with requests in flight", metadata: ["app": "\(settings.app)", "requests": "\(dropped.count)"])
        }
        driverStats.withLock {
            $0.connections = 0
            $0.streams = nil
            $0.active = 0
        }
        credential.streamsLimitChanged(app: settings.app, lane: settings.lane, streams: 0, metrics: metrics)
        credential.requestsInFlightChanged(app: settings.app, lane: settings.lane, requests: 0, metrics: metrics)
        drained.forEach { $0.resume() }
    }
}
