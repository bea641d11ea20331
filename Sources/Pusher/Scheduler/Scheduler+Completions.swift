import Logging
import ProviderKit
import PushCore

/// Completions: what each answer (or its absence) means for the request: delivered, dead-lettered, retried
/// after its backoff, sent again at once, or held for the credential.
extension Scheduler {
    /// Takes a request out of the in-flight table (moved out: no retain and release of what it holds).
    func finished(_ id: Int) -> InFlight? {
        guard id >= 0, id < inFlight.count, let entry = inFlight[id].take() else { return nil }
        freeIDs.append(id)
        active -= 1
        if entry.request.job.lane == .bulk { bulkActive -= 1 }
        return entry
    }

    func complete(_ completion: DriverCompletion) {
        guard let entry = finished(completion.id) else { return }
        if completion.resends > 0 { noteResends(completion.resends, result: completion.result) }
        let request = entry.request
        switch completion.result {
        case .answered(let status, let body, let wireMicros, let retryAfter):
            unreachable = nil
            recentLatencyMicros += (max(0, min(wireMicros, 3_600_000_000)) - recentLatencyMicros) / 16
            let answer = service.classify(status: status, body: body, retryAfter: retryAfter, job: request.job, tokens: entry.tokens)
            metrics.requestDuration.recordMicroseconds(max(0, wireMicros))
            limiter.observe(latencyMicros: wireMicros)
            bulkLimiter.observe(latencyMicros: wireMicros)
            if status == 429 || status == 503 { limiter.observeOverload(answered: true) }
            if answer.overRate { settings.rateLimit.overRate(now: clock.uptimeNanoseconds) }
            if let enqueued = request.job.job.enqueuedAtMillis {
                let now = batchNowMillis ?? clock.wallMillis
                batchNowMillis = now
                let waited = now - enqueued
                if waited >= 0 { metrics.queueToService(request.job.lane).recordMilliseconds(waited) }
            }
            // A 200 with a reason of its own (a vendor's code inside the answer) is counted with it.
            if status == 200 && answer.reason.isEmpty {
                answered200 += 1
            } else {
                answerCounts[AnswerKey(status: status, reason: answer.reason), default: 0] += 1
            }
            settle(entry, answer, status: status)
        case .unprocessed(let reason, let overload):
            notePauseAnswer(status: nil)
            // Refused by the server, or cut by a GOAWAY naming an error; not a graceful GOAWAY (a rotation), nor a
            // request that merely found no stream or connection.
            if overload { limiter.observeOverload(answered: false) }
            forEachToken(of: entry) { resendUnprocessed($0, reason: reason, generation: entry.generation) }
        case .failed(let reason, let sent):
            if !sent && driver.openConnections == 0 { unreachable = reason }
            answerCounts[AnswerKey(status: 0, reason: reason), default: 0] += 1
            if sent { notePossiblyDuplicated(entry) }
            notePauseAnswer(status: nil)
            // Sent on a connection that died before the answer: the service may have it (counted as ambiguous).
            forEachToken(of: entry) {
                apply(.retry(reason: reason), to: $0, status: nil, generation: entry.generation, label: sent ? "ConnectionLost" : nil)
            }
        }
    }

    /// A request the service's `prepare` answered without it being sent: its tokens settled by that answer (status
    /// 0: no HTTP answer of the send itself), its reason counted as an answer's is.
    func settleUnsent(_ id: Int, _ answer: ServiceAnswer) {
        guard let entry = finished(id) else { return }
        if answer.overRate { settings.rateLimit.overRate(now: clock.uptimeNanoseconds) }
        answerCounts[AnswerKey(status: 0, reason: answer.reason), default: 0] += 1
        settle(entry, answer, status: 0)
    }

    /// Every token of a request by an answer: the request's one decision, or each token's where the answer names
    /// some apart (or the request was a batch).
    @inline(__always)
    func settle(_ entry: InFlight, _ answer: ServiceAnswer, status: Int) {
        if entry.batch.isEmpty && answer.exceptions.isEmpty {
            settle(entry.request, answer.decision, status: status, generation: entry.generation)
        } else {
            settleBatch(entry, answer, status: status)
        }
    }

    /// Calls `body` with each token's pending request of an entry: the request's own, then a batch's others.
    /// A batch's tokens that retry come due together (`requestRetryDue`).
    func forEachToken(of entry: InFlight, _ body: (PendingRequest) -> Void) {
        guard !entry.batch.isEmpty else { return body(entry.request) }
        settlingRequest = true
        defer {
            settlingRequest = false
            requestRetryDue = nil
        }
        body(entry.request)
        for member in entry.batch { body(member) }
    }

    /// One token's outcome of an answer. The credential's pause and readiness hear the answer once per request
    /// (`settleBatch`), not once per token.
    func settle(_ request: PendingRequest, _ decision: ServiceDecision, status: Int, generation: Int,
                noteAnswer: Bool = true) {
        if case .credentialRefused(let reason) = decision {
            refuseCredential(request, reason: reason, detail: nil)
        } else if case .configurationRefused(let reason, let detail) = decision {
            refuseCredential(request, reason: reason, detail: detail, configuration: true)
        } else if case .renewAndResend(let reason) = decision {
            if noteAnswer { service.renew(generation: generation) }
            guard request.unprocessedInARow < Self.freeResendsInARow else {
                // Renewed and rejected again, time after time: the credential itself is refused, and no retry fixes
                // that. The app pauses (its probes carry a renewed credential); nothing is dead-lettered.
                refuseCredential(request, reason: reason, detail: nil)
                return
            }
            // The credential was rejected before the message was looked at: a new one, and the request
            // goes again at once without spending an attempt (bounded like any unprocessed re-send).
            retryCounts[reason, default: 0] += 1
            var again = request
            again.unprocessedInARow += 1
            ready.append(again, lane: request.job.lane)
        } else {
            if noteAnswer {
                noteAccepted(status: status)
                notePauseAnswer(status: status)
            }
            apply(decision, to: request, status: status, generation: generation)
        }
    }

    /// The outcomes of a batch's answer: the answer's decision for each token, except those it names apart.
    /// Only the tokens that need it are sent again: nothing delivered goes twice because a neighbour failed.
    func settleBatch(_ entry: InFlight, _ answer: ServiceAnswer, status: Int) {
        var decisions: [ServiceDecision?] = []
        if !answer.exceptions.isEmpty {
            decisions = Array(repeating: nil, count: entry.tokens.count)
            for (position, decision) in answer.exceptions where position >= 0 && position < decisions.count {
                decisions[position] = decision
            }
        }
        // The request as a whole: the credential worked unless the answer refused or rejected it.
        switch answer.decision {
        case .credentialRefused, .configurationRefused:
            break
        case .renewAndResend, .renewAndRetry:
            service.renew(generation: entry.generation)
            notePauseAnswer(status: status)
        default:
            noteAccepted(status: status)
            notePauseAnswer(status: status)
        }
        var position = 0
        forEachToken(of: entry) { member in
            let decision = decisions.isEmpty ? answer.decision : (decisions[position] ?? answer.decision)
            position += 1
            if case .renewAndRetry(let reason) = decision {
                // Renewed once above for the request; each token retries.
                retry(member, reason: reason, status: status, label: nil)
            } else {
                settle(member, decision, status: status, generation: entry.generation, noteAnswer: false)
            }
        }
    }

    /// A request the server never processed: again at once, no attempt spent, no duplicate possible; after
    /// `freeResendsInARow` such times it spends an attempt and waits its backoff like any retry.
    func resendUnprocessed(_ request: PendingRequest, reason: String, generation: Int) {
        guard request.unprocessedInARow < Self.freeResendsInARow else {
            // Not processed again and again: the server refuses everything (or goes away on every
            // connection). This one spends an attempt and backs off like any retry.
            noteUsedUpFreeResends(reason: reason)
            apply(.retry(reason: reason), to: request, status: nil, generation: generation)
            return
        }
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
    }

    func apply(_ decision: ServiceDecision, to request: PendingRequest, status: Int?, generation: Int,
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
            // The service's renewal rules apply (such as a minimum age between JWT renewals); if none is
            // allowed, a plain retry.
            service.renew(generation: generation)
            retry(request, reason: reason, status: status, label: label)
        case .credentialRefused(let reason):
            refuseCredential(request, reason: reason, detail: nil)
        case .configurationRefused(let reason, let detail):
            refuseCredential(request, reason: reason, detail: detail, configuration: true)
        case .quotaSpent(let reason, let untilWallMillis):
            waitForQuota(request, reason: reason, untilWallMillis: untilWallMillis)
        }
    }

    /// The app's quota for the day is spent for the request's class (a vendor counts marketing apart from chat):
    /// that class of the app's messages is held until the vendor's day rolls over, and the request waits until then
    /// with its attempt given back. The app's other classes go on; the hold is what isolation sees (the app's new
    /// messages of that class are parked); expiry is checked when it starts again.
    func waitForQuota(_ request: PendingRequest, reason: String, untilWallMillis: Int64) {
        let nowWall = clock.wallMillis
        let waitMillis = min(max(0, untilWallMillis &- nowWall), Self.longestQuotaWaitMillis)
        let now = clock.uptimeNanoseconds
        // The tokens of one request wait for one time, so they go again together as one request.
        let due = requestRetryDue ?? now &+ UInt64(waitMillis) &* 1_000_000
        if settlingRequest { requestRetryDue = due }
        let messageClass = request.job.messageClass
        if credential.hold(messageClass, until: due, reason: "quota: \(reason)", nowWallMillis: nowWall,
                           untilWallMillis: nowWall &+ waitMillis) {
            logger?.warning("\(service.name) says this app's quota for the day is spent for its \(messageClass.rawValue) messages: they wait until the vendor's day rolls over, in \(waitMillis / 60_000) min; the app's other messages go on", metadata: [
                "app": "\(settings.app)", "reason": "\(reason)", "class": "\(messageClass.rawValue)",
            ])
        }
        retryCounts[reason, default: 0] += 1
        var again = request
        again.unprocessedInARow = 0
        delayed.insert(again, due: due)
    }

    func retry(_ request: PendingRequest, reason: String, status: Int?, label: String?, notBeforeMillis: Int64? = nil,
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
        let due: UInt64
        if let shared = requestRetryDue {
            due = shared
        } else {
            due = clock.uptimeNanoseconds + delay
            if settlingRequest { requestRetryDue = due }
        }
        delayed.insert(next, due: due)
    }

    func resolve(_ request: PendingRequest, _ outcome: TokenOutcome) {
        // Read through the context in place: binding `request.job.job` to a constant copied the whole job.
        let context = request.job
        let token = context.job.tokens[request.token]
        resolvedTokens += 1
        settledSinceMeasure += 1
        context.job.forEachOwner(ofToken: request.token) { resolutions.append(Resolution(seq: $0, token: token, outcome: outcome)) }
    }

    /// Says (at most once per `unprocessedNoticeNanos`, with a count) that requests keep coming back unprocessed
    /// and now spend attempts: what a server that refuses everything looks like, without a line per request.
    func noteUsedUpFreeResends(reason: String) {
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
    func noteResends(_ count: Int, result: DriverCompletion.Result) {
        retryCounts["ResentByLibcurl", default: 0] += count
        resentByLibcurl.add(count, ordering: .relaxed)
        if let logger, logger.logLevel <= .debug {
            logger.debug("libcurl sent a request again on its own (a refused stream, a GOAWAY or a reused connection that had died)", metadata: [
                "app": "\(settings.app)", "times": "\(count)", "result": "\(result)",
            ])
        }
    }

    /// A request the service may have received but did not answer (a timeout after it was written, a connection
    /// lost after it was sent): its tokens' retries may deliver them twice, counted in
    /// `push_notifications_possibly_duplicated_total{provider, app}`.
    func notePossiblyDuplicated(_ entry: InFlight) {
        PushMetrics.shared.possiblyDuplicated(provider: metrics.provider, app: settings.app, count: entry.tokens.count)
        possiblyDuplicated.add(entry.tokens.count, ordering: .relaxed)
    }
}
