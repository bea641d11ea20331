import Foundation
import Logging
import ProviderKit
import PushCore

/// Intake: what other threads hand the lane (jobs, a drain, an abort), and how the thread takes jobs in.
extension Scheduler {
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
            let waiting = intake.withLock { $0.phase.finish(continuation) }
            if !waiting {
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
        intake.withLock { $0.phase.abort() }
        driver.wake()
    }

    /// Takes a batch's jobs in, in the order they came. Each job is moved out of the batch (`popLast` hands over
    /// the job itself, where iterating copies it and retains every string and array of it once more, on this
    /// thread, of objects another thread made); reversed first, in place, so that the last is the first.
    /// Reversed through the buffer: its `swapAt` moves the elements, where the array's own copies each job
    /// and destroys the old one (perf showed that copy at 3% of this thread).
    func admit(_ batch: inout [PushJob]) {
        batch.withUnsafeMutableBufferPointer { $0.reverse() }
        while let job = batch.popLast() {
            let context = JobContext(job: job)  // the job's last use: moved, not copied
            for index in context.job.tokens.indices {
                ready.append(PendingRequest(job: context, token: index, attempt: 1), lane: context.lane)
            }
        }
    }
}
