import PushCore
import Synchronization

/// What the scheduler lanes of one credential share: whether the service refuses it (InvalidProviderToken,
/// BadCertificate, a key that cannot sign, a refused grant), how many lanes are paused for it, each lane's
/// stream limit, and until when the service asked all of them to hold back (a 429 for a whole project).
/// A refusal and readiness change in one step under one lock, so one lane's refusal and another lane's
/// success cannot interleave and leave readiness false for a credential the service accepts.
public final class CredentialState: Sendable {
    private struct State {
        var refused = false
        var pausedLanes = 0
        var streams: [Int: Int] = [:]
        var requests: [Int: Int] = [:]
    }
    private let state = Locked(State())
    /// `refused`, readable without the lock: every 200 answer asks whether the credential had been refused,
    /// and nearly always it was not. Written only under the lock, with `refused`.
    private let refusedHint = Atomic<Bool>(false)
    /// Uptime nanoseconds until which no lane starts a request (0: none); read on every start pass.
    private let heldUntil = Atomic<UInt64>(0)
    /// The classes of the app's messages held (a vendor's quota for that class spent): no lane starts a request of
    /// one until its hold ends; the other classes go on. `classHoldsUntil` is the latest end of any (0: none), so
    /// that a start pass reads one atomic while nothing is held.
    private let classHolds = Locked([MessageClass: ClassHold]())
    private let classHoldsUntil = Atomic<UInt64>(0)

    struct ClassHold {
        /// Uptime nanoseconds.
        var until: UInt64
        var board: AppWaitBoard.ClassHold
    }

    public init() {}

    /// Marks the credential refused; true if it was not already (the caller logs once).
    func refuse(app: String, reason: String, service: String, readiness: Readiness?) -> Bool {
        state.withLock { state in
            guard !state.refused else { return false }
            state.refused = true
            refusedHint.store(true, ordering: .releasing)
            readiness?.set(.credentialsRejected(app: app, reason: reason, service: service))
            return true
        }
    }

    /// A request was accepted: the credential works; true if it had been refused.
    /// Without the lock while the credential stands accepted: an answer that races a refusal from another lane
    /// then counts as having come before it (the refusal stands, and that lane's probes lift it), the order
    /// the lock would have chosen had the refusal taken it first.
    func accept(app: String, readiness: Readiness?) -> Bool {
        guard refusedHint.load(ordering: .acquiring) else { return false }
        return state.withLock { state in
            guard state.refused else { return false }
            state.refused = false
            refusedHint.store(false, ordering: .releasing)
            readiness?.clearCredentials(app: app)
            return true
        }
    }

    /// A lane paused or resumed (`CredentialPause`): the app's gauge is 1 while any lane is paused.
    func lanePaused(app: String, metrics: ServiceMetrics) {
        state.withLock { state in
            state.pausedLanes += 1
            if state.pausedLanes == 1 { metrics.appPaused(app: app, paused: true) }
        }
    }

    func laneResumed(app: String, metrics: ServiceMetrics) {
        state.withLock { state in
            state.pausedLanes = max(0, state.pausedLanes - 1)
            if state.pausedLanes == 0 { metrics.appPaused(app: app, paused: false) }
        }
    }

    /// One lane's servers' stream limits changed: the app's `push_*_streams_limit` is the sum.
    func streamsLimitChanged(app: String, lane: Int, streams: Int, metrics: ServiceMetrics) {
        state.withLock { state in
            state.streams[lane] = streams
            metrics.streamsLimit(app: app, streams: state.streams.values.reduce(0, +))
        }
    }

    /// One lane's requests in flight changed: the app's `push_*_requests_in_flight` is the sum.
    func requestsInFlightChanged(app: String, lane: Int, requests: Int, metrics: ServiceMetrics) {
        state.withLock { state in
            state.requests[lane] = requests
            metrics.requestsInFlight(app: app, requests: state.requests.values.reduce(0, +))
        }
    }

    /// Every lane holds back until `until` (uptime nanoseconds); true if this moved the time later.
    func hold(until: UInt64) -> Bool {
        var current = heldUntil.load(ordering: .relaxed)
        while until > current {
            let (exchanged, original) = heldUntil.compareExchange(expected: current, desired: until, ordering: .relaxed)
            if exchanged { return true }
            current = original
        }
        return false
    }

    /// Holds the app's messages of `messageClass` until `until` (uptime ns); true when this starts a hold.
    func hold(_ messageClass: MessageClass, until: UInt64, reason: String, nowWallMillis: Int64, untilWallMillis: Int64) -> Bool {
        let started = classHolds.withLock { holds -> Bool in
            if let current = holds[messageClass] {
                if until > current.until {
                    holds[messageClass]?.until = until
                    holds[messageClass]?.board.untilWallMillis = untilWallMillis
                }
                return false
            }
            holds[messageClass] = ClassHold(until: until, board: AppWaitBoard.ClassHold(
                reason: reason, sinceWallMillis: nowWallMillis, untilWallMillis: untilWallMillis))
            return true
        }
        classHoldsUntil.max(until, ordering: .relaxed)
        return started
    }

    /// When the hold of `messageClass` ends, if one is in force at `now`.
    func holdUntil(_ messageClass: MessageClass, now: UInt64) -> UInt64? {
        guard classHoldsUntil.load(ordering: .relaxed) > now else { return nil }
        return classHolds.withLock { holds in
            guard let until = holds[messageClass]?.until, until > now else { return nil }
            return until
        }
    }

    /// The classes held at `now` (those whose hold has ended are forgotten).
    func heldClasses(now: UInt64) -> [MessageClass: AppWaitBoard.ClassHold] {
        guard classHoldsUntil.load(ordering: .relaxed) > now else { return [:] }
        return classHolds.withLock { holds in
            holds = holds.filter { $0.value.until > now }
            return holds.mapValues(\.board)
        }
    }

    /// When the hold ends, if one is in force at `now`.
    func holdUntil(now: UInt64) -> UInt64? {
        let until = heldUntil.load(ordering: .relaxed)
        return until > now ? until : nil
    }

    /// No credential can be had for now (readiness says why); `waitOver` when one can.
    func waiting(app: String, reason: String, readiness: Readiness?) {
        readiness?.setCredentialWait(app: app, reason: reason)
    }

    func waitOver(app: String, readiness: Readiness?) {
        readiness?.clearCredentialWait(app: app)
    }
}
