import Foundation
import PushCore

/// A thread of its own that runs blocking work (hiredis calls) one job at a time, so that
/// Swift's cooperative pool never blocks. Jobs are bridged to async callers with continuations.
public final class DedicatedThread: Sendable {
    private struct State: ~Copyable {
        var jobs: [@Sendable () -> Void] = []
        var stopped = false
    }

    private let state = Locked(State())
    private let signal = NSCondition()
    private let name: String

    public init(name: String) {
        self.name = name
        let thread = Thread { [self] in self.loop() }
        thread.name = name
        thread.start()
    }

    /// Runs `body` on this thread and returns its result to the awaiting task.
    public func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, Error>) in
            let accepted = enqueue {
                continuation.resume(with: Result { try body() })
            }
            if !accepted { continuation.resume(throwing: CancellationError()) }
        }
    }

    /// Ends the thread once the jobs already queued have run.
    public func stop() {
        signal.lock()
        state.withLock { $0.stopped = true }
        signal.signal()
        signal.unlock()
    }

    private func enqueue(_ job: @escaping @Sendable () -> Void) -> Bool {
        signal.lock()
        defer { signal.unlock() }
        let accepted = state.withLock { state -> Bool in
            if state.stopped { return false }
            state.jobs.append(job)
            return true
        }
        if accepted { signal.signal() }
        return accepted
    }

    private func loop() {
        // Redis sockets are written here (TLS through SSL_write, which cannot pass MSG_NOSIGNAL): a Redis
        // that resets the connection must fail the write, not end the process.
        BrokenPipes.blockOnThisThread()
        while true {
            signal.lock()
            var batch: [@Sendable () -> Void] = []
            var stopped = false
            while true {
                (batch, stopped) = state.withLock { state in
                    let jobs = state.jobs
                    state.jobs.removeAll(keepingCapacity: true)
                    return (jobs, state.stopped)
                }
                if !batch.isEmpty || stopped { break }
                signal.wait()
            }
            signal.unlock()
            for job in batch { job() }
            if stopped && batch.isEmpty { return }
        }
    }
}
