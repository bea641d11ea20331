/// Where a scheduler is in its life, as the threads that hand it work see it (`Scheduler.Intake`, under its
/// lock): a state machine in place of the flags it had (finishing, aborting, exited), which allowed combinations
/// no lane can be in. `Waiter` is what a drain resumes when the thread ends: a continuation (anything in tests).
enum IntakePhase<Waiter> {
    /// Taking jobs and sending.
    case running
    /// `finish` was called: the thread ends once every accepted token has its outcome, and resumes `waiters`.
    case draining(waiters: [Waiter])
    /// `abort` was called: the thread ends at its next turn, dropping what is in flight (its messages stay
    /// claimed), and resumes `waiters`: drains asked for before the abort or after it.
    case aborting(waiters: [Waiter])
    /// The thread has ended: nothing will resume a waiter any more.
    case exited

    /// A drain is asked for. False when the thread has already ended: the caller resumes `waiter` itself.
    mutating func finish(_ waiter: Waiter) -> Bool {
        switch self {
        case .running: self = .draining(waiters: [waiter])
        case .draining(let waiters): self = .draining(waiters: waiters + [waiter])
        case .aborting(let waiters): self = .aborting(waiters: waiters + [waiter])
        case .exited: return false
        }
        return true
    }

    /// The thread is to end at its next turn (once it has ended, nothing changes).
    mutating func abort() {
        switch self {
        case .running: self = .aborting(waiters: [])
        case .draining(let waiters): self = .aborting(waiters: waiters)
        case .aborting, .exited: break
        }
    }

    /// The thread ends once it has no work left.
    var draining: Bool {
        if case .draining = self { return true }
        return false
    }

    /// The thread ends at once.
    var aborting: Bool {
        if case .aborting = self { return true }
        return false
    }

    /// The thread ends: the waiters to resume, and whether it was aborted.
    mutating func exit() -> (waiters: [Waiter], aborted: Bool) {
        defer { self = .exited }
        switch self {
        case .running, .exited: return ([], false)
        case .draining(let waiters): return (waiters, false)
        case .aborting(let waiters): return (waiters, true)
        }
    }
}
