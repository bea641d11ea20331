import CCurl
import Foundation
import Logging
import PushCore
import Synchronization

/// One libcurl multi handle on a thread of its own, for one endpoint and credential: HTTP/2 with
/// multiplexing over a small pool of connections, thousands of streams in flight, easy handles reused.
/// It applies SPEC section 4 to every answer on its own thread and hands final outcomes to `sink` in
/// batches, so no per-token work crosses into Swift concurrency.
public final class CurlTransport: @unchecked Sendable {
    // Shared with submitters: guarded by `intake`. Everything else below is confined to the thread.
    private struct Intake: ~Copyable {
        var jobs: [PushJob] = []
        var finishing = false
        var aborting = false
        /// The thread has ended: nothing will resume a drain waiter any more.
        var exited = false
        var drained: [CheckedContinuation<Void, Never>] = []
    }

    private let intake = Mutex(Intake())
    private let settings: TransportSettings
    private let provider: ProviderToken?
    private let sink: @Sendable ([Resolution]) -> Void
    private let multi: UnsafeMutableRawPointer
    /// Tokens accepted and not yet final, across all jobs: what a drain waits for.
    public let outstanding = Atomic<Int>(0)
    /// Requests libcurl sent again on its own, unasked (counted as retries with reason `ResentByLibcurl`).
    public let resentByLibcurl = Atomic<Int>(0)
    private let connections: ConnectionCounter
    private let readiness: Readiness?
    private let logger: Logger?
    private let metrics = PushMetrics.shared
    /// Set when `settings.socketAction`: libcurl driven by socket_action and epoll instead of perform and poll.
    private let driver: SocketActionDriver?

    // Thread-confined state.
    private var idle: [RequestSlot] = []
    private var active = 0
    private var ready: [PendingRequest] = []
    private var readyHead = 0
    private var delayed: [PendingRequest] = []  // sorted by `due`, soonest last
    private var resolutions: [Resolution] = []
    private var resolvedTokens = 0
    /// Every slot ever made, so an abort can detach the busy ones.
    private var slots: [RequestSlot] = []
    /// Answers and retries since the last flush to the metrics, counted here so the thread touches the
    /// shared counters once per batch rather than once per request.
    private var answerCounts: [AnswerKey: Int] = [:]
    private var retryCounts: [String: Int] = [:]
    /// Whether APNs refuses the credential, shared by the lanes of one credential.
    private let credential: CredentialState
    /// Requests handed to libcurl at most, adapted to what the servers take (`ConcurrencyLimiter`).
    private var activeLimit: Int
    private var limiter = ConcurrencyLimiter()
    /// Requests held while APNs refuses the credential, then probed (`CredentialPause`).
    private var pause: CredentialPause
    private var lastDeadlineScan: UInt64 = 0
    static let deadlineScanNanos: UInt64 = 50_000_000

    struct AnswerKey: Hashable {
        var status: Int
        var reason: String
    }

    struct PendingRequest {
        var job: JobContext
        var token: Int
        var attempt: Int
        var due: UInt64 = 0
    }

    public init(settings: TransportSettings, provider: ProviderToken?, readiness: Readiness? = nil, logger: Logger? = nil,
                credential: CredentialState = CredentialState(), sink: @escaping @Sendable ([Resolution]) -> Void) {
        CurlGlobal.initialize()
        self.settings = settings
        self.credential = credential
        self.readiness = readiness
        self.logger = logger
        connections = ConnectionCounter(app: settings.app, logger: logger)
        activeLimit = max(1, min(settings.initialActiveRequests, settings.maxActiveRequests))
        pause = CredentialPause(firstNanos: UInt64(max(1, settings.credentialProbeFirstMillis)) * 1_000_000,
                                longestNanos: UInt64(max(1, settings.credentialProbeLongestMillis)) * 1_000_000)
        limiter.limit = activeLimit
        limiter.latencyFloorMicros = Int64(settings.requestTimeoutMillis) * 100
        self.provider = provider
        self.sink = sink
        multi = curl_multi_init()
        driver = settings.socketAction ? SocketActionDriver(multi: multi) : nil
        _ = curlx_multi_long(multi, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX))
        _ = curlx_multi_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, settings.connections)
        _ = curlx_multi_long(multi, CURLMOPT_MAX_CONCURRENT_STREAMS, 1000)
        let thread = Thread { [self] in self.loop() }
        thread.name = "apns-transport"
        thread.start()
    }

    /// Ends the transport thread's wait: new work, a drain or an abort.
    private func wake() {
        if let driver { driver.wake() } else { curl_multi_wakeup(multi) }
    }

    /// Sockets open to APNs (HTTP/2 connections and connection attempts).
    public var openConnections: Int { connections.open.load(ordering: .relaxed) }

    /// Hands jobs to the transport; returns at once.
    public func submit(_ jobs: [PushJob]) {
        let tokens = jobs.reduce(0) { $0 + $1.tokens.count }
        outstanding.add(tokens, ordering: .relaxed)
        intake.withLock { $0.jobs.append(contentsOf: jobs) }
        wake()
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
                wake()
            }
        }
    }

    /// Drops whatever is in flight (its messages stay claimed in Redis) and ends the thread.
    public func abort() {
        intake.withLock { $0.aborting = true }
        wake()
    }

    // MARK: the transport thread

    private func loop() {
        while true {
            let (jobs, finishing, aborting) = intake.withLock { state in
                let jobs = state.jobs
                state.jobs.removeAll(keepingCapacity: true)
                return (jobs, state.finishing, state.aborting)
            }
            if aborting { break }
            for job in jobs {
                let context = JobContext(job: job)
                for index in job.tokens.indices { ready.append(PendingRequest(job: context, token: index, attempt: 1)) }
            }
            let now = DispatchTime.now().uptimeNanoseconds
            while let last = delayed.last, last.due <= now { ready.append(delayed.removeLast()) }
            startRequests()

            var running: Int32 = 0
            if let driver { driver.runDueTimer() } else { curl_multi_perform(multi, &running) }
            collectCompletions()
            let scanTime = DispatchTime.now().uptimeNanoseconds
            if scanTime &- lastDeadlineScan >= Self.deadlineScanNanos { scanDeadlines(now: scanTime) }
            if !resolutions.isEmpty {
                let batch = resolutions
                resolutions.removeAll(keepingCapacity: true)
                outstanding.subtract(resolvedTokens, ordering: .relaxed)
                resolvedTokens = 0
                sink(batch)
            }
            if !answerCounts.isEmpty || !retryCounts.isEmpty { flushMetrics() }
            if finishing && active == 0 && readyHead >= ready.count && delayed.isEmpty
                && intake.withLock({ $0.jobs.isEmpty }) {
                break
            }
            var timeout: Int32 = 100
            if let soonest = delayed.last {
                let wait = soonest.due > now ? (soonest.due - now) / 1_000_000 : 0
                timeout = Int32(min(UInt64(timeout), wait))
            }
            if readyHead < ready.count && active < activeLimit {
                if let wait = pause.waitNanos(now: now) {
                    timeout = min(timeout, Int32(min(wait / 1_000_000 + 1, 100)))
                } else if !pause.paused {
                    timeout = 0
                }
            }
            timeout = min(timeout, Int32(Self.deadlineScanNanos / 1_000_000))
            if let driver { driver.wait(timeoutMillis: timeout) } else { curl_multi_poll(multi, nil, 0, timeout, nil) }
        }
        shutdown()
    }

    private func startRequests() {
        var allowance = pause.allowance(now: pause.paused ? DispatchTime.now().uptimeNanoseconds : 0, active: active)
        while active < activeLimit && readyHead < ready.count && allowance > 0 {
            let request = ready[readyHead]
            readyHead += 1
            let before = active
            start(request)
            // Only a request that went to libcurl is a probe (an expired one is resolved without a send).
            if pause.paused && active > before {
                pause.probeStarted()
                allowance -= 1
            }
        }
        if readyHead == ready.count {
            ready.removeAll(keepingCapacity: true)
            readyHead = 0
        } else if readyHead > 4096 {
            ready.removeFirst(readyHead)
            readyHead = 0
        }
    }

    private func start(_ request: PendingRequest) {
        let job = request.job
        if job.job.headers.isExpired(nowSeconds: Int64(Date().timeIntervalSince1970)) {
            resolve(request, .failed(reason: "Expired", status: nil, attempts: request.attempt - 1))
            return
        }
        var bearer: String?
        var generation = 0
        if let provider {
            do {
                let token = try provider.current()
                bearer = token.bearer
                generation = token.generation
            } catch {
                resolve(request, .failed(reason: "ProviderTokenUnavailable: \(error)", status: nil, attempts: request.attempt))
                return
            }
        }
        let slot: RequestSlot
        if let reused = idle.popLast() {
            slot = reused
        } else {
            slot = RequestSlot(settings: settings, connections: connections)
            slots.append(slot)
        }
        slot.prepare(job: job, token: request.token, attempt: request.attempt, generation: generation,
                     url: "\(settings.baseURL)/3/device/\(job.job.tokens[request.token])",
                     headers: job.headers(bearer: bearer, generation: generation))
        curl_multi_add_handle(multi, slot.easy)
        active += 1
    }

    private func collectCompletions() {
        var remaining: Int32 = 0
        var nowMillis: Int64?  // read once per batch of completions, and only if a message carries enqueued_at
        while let message = curl_multi_info_read(multi, &remaining) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
            let code = message.pointee.data.result
            let slot = Unmanaged<RequestSlot>.fromOpaque(curlx_private(easy)!).takeUnretainedValue()
            curl_multi_remove_handle(multi, easy)
            active -= 1
            // RFC 9113 section 8.1: a server may answer before the request's END_STREAM and then reset the
            // stream with NO_ERROR; clients must not discard that response. libcurl reports it as a stream
            // error, so a status received by this transfer is honoured in that case.
            let answered = slot.status > 0 && (code == CURLE_OK || code == CURLE_HTTP2_STREAM)
            let status = answered ? slot.status : 0
            let transportError = answered ? nil : Self.describe(code)
            let decision = ResponseClassifier.classify(status: status == 0 ? nil : status, body: slot.body,
                                                       transportError: transportError)
            if answered {
                // From the request being sent to the transfer's end: waiting for a connection is before
                // PRETRANSFER; waiting inside nghttp2 for a free stream is after it, and the limiter keeps it short.
                let wire = curlx_info_off(easy, CURLINFO_TOTAL_TIME_T) - curlx_info_off(easy, CURLINFO_PRETRANSFER_TIME_T)
                metrics.apnsRequestDuration.recordMicroseconds(max(0, wire))
                limiter.observe(latencyMicros: Int64(wire))
                if let enqueued = slot.job!.job.enqueuedAtMillis {
                    let now = nowMillis ?? WallClock.nowMillis()
                    nowMillis = now
                    let waited = now - enqueued
                    if waited >= 0 { metrics.queueToAPNs.recordMilliseconds(waited) }
                }
            }
            if slot.sends > 1 { noteResends(slot.sends - 1, answered: answered, code: code) }
            answerCounts[AnswerKey(status: status, reason: decision.reason), default: 0] += 1
            noteCredential(decision, status: status)
            let request = PendingRequest(job: slot.job!, token: slot.token, attempt: slot.attempt)
            let generation = slot.generation
            let lastStatus = status == 0 ? nil : status
            slot.release()
            idle.append(slot)
            if case .retry(let reason) = decision, ResponseClassifier.credentialReasons.contains(reason) {
                hold(request, refusedFor: reason)
            } else {
                notePauseAnswer(status: lastStatus)
                apply(decision, to: request, status: lastStatus, generation: generation)
            }
        }
    }

    /// Times requests from when libcurl sends them (PRETRANSFER), so time spent waiting for a connection
    /// never counts, and lets the limiter adapt how many requests libcurl holds: nghttp2 queues requests
    /// beyond the servers' stream limit after PRETRANSFER, so that wait is kept short by the limit instead.
    private func scanDeadlines(now: UInt64) {
        lastDeadlineScan = now
        let timeout = UInt64(settings.requestTimeoutMillis) * 1_000_000
        // A request that never reaches the wire (a connection that never comes) still ends, much later.
        let stuck = max(timeout * 6, 60_000_000_000)
        var onWire = 0
        var expired: [RequestSlot] = []
        for slot in slots where slot.job != nil {
            let sinceStart = now &- slot.startedAt
            let pretransfer = curlx_info_off(slot.easy, CURLINFO_PRETRANSFER_TIME_T)
            if pretransfer > 0 {
                onWire += 1
                let wireNanos = UInt64(pretransfer) &* 1000
                if sinceStart > wireNanos && sinceStart - wireNanos > timeout { expired.append(slot) }
            } else if sinceStart > stuck {
                expired.append(slot)
            }
        }
        for slot in expired {
            curl_multi_remove_handle(multi, slot.easy)
            active -= 1
            answerCounts[AnswerKey(status: 0, reason: "Timeout"), default: 0] += 1
            let request = PendingRequest(job: slot.job!, token: slot.token, attempt: slot.attempt)
            let generation = slot.generation
            slot.release()
            idle.append(slot)
            notePauseAnswer(status: nil)
            apply(.retry(reason: "Timeout"), to: request, status: nil, generation: generation)
        }
        // Requests are started up to the limit whenever some are ready, so ready ones mean the limit binds.
        let demand = readyHead < ready.count
        activeLimit = limiter.update(now: now, demand: demand, maximum: settings.maxActiveRequests)
    }

    private func apply(_ decision: ResponseDecision, to request: PendingRequest, status: Int?, generation: Int) {
        switch decision {
        case .delivered:
            resolve(request, .delivered)
        case .feedback(let reason, let timestamp):
            resolve(request, .feedback(reason: reason, timestampMillis: timestamp))
        case .deadLetter(let reason):
            resolve(request, .failed(reason: reason, status: status, attempts: request.attempt))
        case .retry(let reason):
            retry(request, reason: reason, status: status)
        case .renewTokenAndRetry(let reason):
            // Renewal respects the 20-minute rule inside ProviderToken; if refused, this is a plain retry.
            _ = try? provider?.expired(generation: generation)
            retry(request, reason: reason, status: status)
        }
    }

    private func retry(_ request: PendingRequest, reason: String, status: Int?) {
        guard request.attempt < settings.retry.maxAttempts else {
            resolve(request, .failed(reason: reason, status: status, attempts: request.attempt))
            return
        }
        retryCounts[reason, default: 0] += 1
        var next = request
        next.attempt += 1
        let delay = UInt64(settings.retry.delayMillis(afterAttempt: request.attempt)) * 1_000_000
        next.due = DispatchTime.now().uptimeNanoseconds + delay
        if let logger, logger.logLevel <= .debug {
            logger.debug("APNs request retried", metadata: [
                "reason": "\(reason)", "attempt": "\(next.attempt)", "delay_ms": "\(delay / 1_000_000)",
                "token": "\(request.job.job.tokens[request.token].prefix(8))", "app": "\(settings.app)",
            ])
        }
        // Keep `delayed` sorted with the soonest last; retries are rare, so a linear insert is fine.
        let index = delayed.firstIndex { $0.due <= next.due } ?? delayed.count
        delayed.insert(next, at: index)
    }

    /// libcurl 7.88 re-sends a request by itself after REFUSED_STREAM or a GOAWAY that did not cover its stream,
    /// or when a reused connection proves dead;
    /// a server that had in fact received the first send may then deliver it twice. Made visible here.
    private func noteResends(_ count: Int, answered: Bool, code: CURLcode) {
        retryCounts["ResentByLibcurl", default: 0] += count
        resentByLibcurl.add(count, ordering: .relaxed)
        if let logger, logger.logLevel <= .debug {
            logger.debug("libcurl sent a request again on its own (a refused stream, a GOAWAY or a reused connection that had died)", metadata: [
                "app": "\(settings.app)", "times": "\(count)",
                "result": "\(answered ? "answered" : Self.describe(code))",
            ])
        }
    }

    /// A request refused for the app's credential waits (its attempt not spent) while the app is paused.
    private func hold(_ request: PendingRequest, refusedFor reason: String) {
        let now = DispatchTime.now().uptimeNanoseconds
        let started = pause.refused(now: now)
        if started, credential.pausedLanes.add(1, ordering: .relaxed).newValue == 1 {
            metrics.apnsAppPaused(app: settings.app, paused: true)
        }
        retryCounts[reason, default: 0] += 1
        if let logger, logger.logLevel <= .debug {
            logger.debug("APNs refused the credential: requests held", metadata: [
                "reason": "\(reason)", "app": "\(settings.app)", "pause_started": "\(started)",
                "next_probe_ms": "\(pause.resumeAt > now ? (pause.resumeAt - now) / 1_000_000 : 0)",
            ])
        }
        ready.append(request)
    }

    private func notePauseAnswer(status: Int?) {
        guard pause.paused else { return }
        if pause.answered(status: status, now: DispatchTime.now().uptimeNanoseconds) {
            if credential.pausedLanes.subtract(1, ordering: .relaxed).newValue == 0 {
                metrics.apnsAppPaused(app: settings.app, paused: false)
            }
            logger?.notice("APNs authenticates this app's requests again: sending resumes", metadata: ["app": "\(settings.app)"])
        }
    }

    /// Readiness follows the credential: refused by APNs (no retry can fix it) until a request with it succeeds.
    private func noteCredential(_ decision: ResponseDecision, status: Int) {
        if case .retry(let reason) = decision, ResponseClassifier.credentialReasons.contains(reason) {
            if !credential.refused.exchange(true, ordering: .relaxed) {
                readiness?.set(.credentialsRejected(app: settings.app, reason: reason))
                logger?.error("APNs rejects this app's credentials: replace the key or certificate; sending for this app is paused (nothing is dead-lettered, a probe request goes out every \(settings.credentialProbeFirstMillis) ms to \(settings.credentialProbeLongestMillis / 1000) s) and readiness is false until a request succeeds",
                              metadata: ["app": "\(settings.app)", "reason": "\(reason)"])
            }
        } else if status == 200, credential.refused.load(ordering: .relaxed), credential.refused.exchange(false, ordering: .relaxed) {
            readiness?.clearCredentials(app: settings.app)
            logger?.notice("APNs accepts this app's credentials again", metadata: ["app": "\(settings.app)"])
        }
    }

    private func flushMetrics() {
        for (key, count) in answerCounts { metrics.apnsResponses(status: key.status, reason: key.reason, count: count) }
        for (reason, count) in retryCounts { metrics.apnsRetries(reason: reason, count: count) }
        answerCounts.removeAll(keepingCapacity: true)
        retryCounts.removeAll(keepingCapacity: true)
    }

    private func resolve(_ request: PendingRequest, _ outcome: TokenOutcome) {
        let job = request.job.job
        let token = job.tokens[request.token]
        let owners = job.owners(ofToken: request.token)
        resolvedTokens += 1
        for seq in owners { resolutions.append(Resolution(seq: seq, token: token, outcome: outcome)) }
    }

    private func shutdown() {
        let (drained, aborting) = intake.withLock { state -> ([CheckedContinuation<Void, Never>], Bool) in
            let list = state.drained
            state.drained = []
            state.exited = true
            return (list, state.aborting)
        }
        flushMetrics()
        if aborting {
            // Active handles are dropped; their messages are returned to the queue by the worker.
            for slot in slots where slot.job != nil { curl_multi_remove_handle(multi, slot.easy) }
        }
        curl_multi_cleanup(multi)
        drained.forEach { $0.resume() }
    }

    static func describe(_ code: CURLcode) -> String {
        switch code {
        case CURLE_OPERATION_TIMEDOUT: return "Timeout"
        case CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_HOST: return "ConnectionError: \(String(cString: curl_easy_strerror(code)))"
        default: return "TransportError: \(String(cString: curl_easy_strerror(code)))"
        }
    }
}

enum CurlGlobal {
    private static let once: Void = { curl_global_init(Int(CURL_GLOBAL_ALL)) }()
    static func initialize() { _ = once }
}
