import Foundation
import Logging
import PushCore

/// The transport thread: one turn takes jobs in, starts what may start, takes completions, scans deadlines
/// and hands outcomes on; then sleeps until something is due.
extension Scheduler {
    func loop() {
        // This thread writes every socket of its service: a reset connection must fail the write, not end the process.
        BrokenPipes.blockOnThisThread()
        while true {
            // Swapped straight into a variable of its own: a copy would give each batch two owners, and moving
            // the jobs out (`admit`) would then copy them.
            var batches: [[PushJob]] = []
            let (finishing, aborting) = intake.withLock { state in
                swap(&batches, &state.batches)
                return (state.phase.draining, state.phase.aborting)
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

    /// How long the thread may sleep: until the next retry is due, the pause lets a probe out, or the next
    /// deadline scan; not at all when requests are ready and may start.
    func waitMillis(now: UInt64, waiting: Bool) -> Int32 {
        var timeout: UInt64 = Self.deadlineScanNanos / 1_000_000
        if let soonest = delayed.soonest {
            timeout = min(timeout, soonest > now ? (soonest - now + 999_999) / 1_000_000 : 0)
        }
        if let holdUntil = credential.holdUntil(now: now) {
            timeout = min(timeout, (holdUntil - now + 999_999) / 1_000_000)
        } else if let until = rateWaitUntil {
            timeout = min(timeout, until > now ? (until - now + 999_999) / 1_000_000 : 0)
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

    func shutdown() {
        let (drained, aborting) = intake.withLock { $0.phase.exit() }
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
