import Logging
import PushCore

/// Deadlines and limits: requests past their time are given up, and the concurrency limits follow what the
/// servers allow and how they answer.
extension Scheduler {
    /// Requests on the wire longer than the request timeout are given up and retried; one that never
    /// reached the wire (a connection that never comes) ends too, much later.
    func scanDeadlines(now: UInt64) {
        lastDeadlineScan = now
        let timeout = UInt64(settings.requestTimeoutMillis) * 1_000_000
        let stuck = max(timeout * 6, 60_000_000_000)
        var expired: [(id: Int, written: Bool)] = []
        var oldestWire = now
        for id in inFlight.indices {
            // Only the start time: binding the whole entry retained its job, for every request in flight.
            guard let startedAt = inFlight[id]?.startedAt else { continue }
            if let wire = driver.onWireSince(id: id) {
                oldestWire = min(oldestWire, wire)
                if now > wire && now - wire > timeout { expired.append((id, true)) }
            } else if now &- startedAt > stuck {
                expired.append((id, false))
            }
        }
        for (id, written) in expired {
            driver.cancel(id: id)
            guard let entry = finished(id) else { continue }
            // Written, then no answer in time: the service may have it, and its retry may show twice (the same
            // notification id then replaces it on the phone). One never written cannot.
            if written { notePossiblyDuplicated(entry) }
            answerCounts[AnswerKey(status: 0, reason: "Timeout"), default: 0] += 1
            limiter.observeOverload(answered: false)
            notePauseAnswer(status: nil)
            forEachToken(of: entry) { apply(.retry(reason: "Timeout"), to: $0, status: nil, generation: entry.generation) }
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
        oldestOnWireNanos = now &- oldestWire
        reportWaiting(now: now)
    }
}
