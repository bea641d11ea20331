import Synchronization

/// Which apps cannot send just now, and how much of the pipeline their waiting work holds: the meeting point of
/// isolation (docs/architecture.md, "Isolation"). Each transport lane reports, every few tens of milliseconds,
/// whether it waits (a credential that cannot be had or is refused, a hold the service asked for) and how many
/// requests it holds meanwhile. The in-flight gate does not count that work against the room it gives claims,
/// and the collector parks a waiting app's newly claimed messages in Redis (`push:parked:…`) instead of
/// holding them: so one app's trouble never keeps the pipeline from claiming another app's work.
///
/// Lanes report from their own threads; the collector asks on every message, so the common answer (nothing
/// waits) is one atomic load.
public final class AppWaitBoard: Sendable {
    /// An app as messages name it: its provider and the topic producers write.
    public struct App: Hashable, Sendable {
        public var provider: PushProvider
        public var topic: String
        public init(provider: PushProvider, topic: String) {
            self.provider = provider
            self.topic = topic
        }
    }

    /// Why one class of an app's messages waits (a vendor's quota for that class spent), and until when.
    public struct ClassHold: Sendable, Equatable {
        public var reason: String
        /// When it began and when it ends (UNIX ms); nil: not known.
        public var sinceWallMillis: Int64
        public var untilWallMillis: Int64?
        public init(reason: String, sinceWallMillis: Int64, untilWallMillis: Int64?) {
            self.reason = reason
            self.sinceWallMillis = sinceWallMillis
            self.untilWallMillis = untilWallMillis
        }
    }

    private struct LaneReport: Equatable {
        var waiting = false
        var queued = 0
        var reason = ""
        var heldClasses: [MessageClass: ClassHold] = [:]
    }

    private struct State {
        var routes: [App: [Int]] = [:]
        var lanes: [Int: LaneReport] = [:]
        var waitingApps: [App: String] = [:]
        var heldClasses: [App: [MessageClass: ClassHold]] = [:]
    }

    private let state = Locked(State())
    private let anyWaiting = Atomic<Bool>(false)
    private let waitingTotal = Atomic<Int>(0)
    private let changeCounter = Atomic<Int>(0)
    private let changeInput: AsyncStream<Void>.Continuation
    /// Yields whenever an app starts or stops waiting, or the work held by waiting lanes changes: the gate
    /// then looks at its room again, and the unparking loop at the parked lists.
    public let changes: AsyncStream<Void>

    public init() {
        (changes, changeInput) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// The lanes (by their number among all of the worker's lanes) that send for `app`.
    public func register(_ app: App, lanes: [Int]) {
        state.withLock { $0.routes[app] = lanes }
    }

    /// Every app this worker sends for.
    public var apps: [App] { state.withLock { Array($0.routes.keys) } }

    /// A lane's state: whether it waits (`reason` says why) and how many requests it holds while it does (or while a
    /// class of its messages is held); `heldClasses`: the classes of the app's messages that wait (a quota spent
    /// for that class), which hold nothing of the app's other classes.
    public func report(lane: Int, waiting: Bool, queued: Int, reason: String = "", heldClasses: [MessageClass: ClassHold] = [:]) {
        let changed = state.withLock { state -> Bool in
            let before = state.lanes[lane] ?? LaneReport()
            let now = LaneReport(waiting: waiting, queued: waiting || !heldClasses.isEmpty ? max(0, queued) : 0, reason: reason,
                                 heldClasses: heldClasses)
            if before == now { return false }
            state.lanes[lane] = now
            var apps: [App: String] = [:]
            var held: [App: [MessageClass: ClassHold]] = [:]
            for (app, lanes) in state.routes where !lanes.isEmpty {
                // An app waits when none of its lanes can send: one lane that still sends takes its work.
                if lanes.allSatisfy({ state.lanes[$0]?.waiting == true }) {
                    apps[app] = state.lanes[lanes[0]]?.reason ?? ""
                }
                // A class is held for the app (its lanes share the hold): as any of its lanes says.
                for lane in lanes {
                    for (messageClass, hold) in state.lanes[lane]?.heldClasses ?? [:] where held[app]?[messageClass] == nil {
                        held[app, default: [:]][messageClass] = hold
                    }
                }
            }
            state.waitingApps = apps
            state.heldClasses = held
            anyWaiting.store(!apps.isEmpty || !held.isEmpty, ordering: .releasing)
            waitingTotal.store(state.lanes.values.reduce(0) { $0 + $1.queued }, ordering: .releasing)
            return true
        }
        if changed {
            changeCounter.add(1, ordering: .releasing)
            changeInput.yield(())
        }
    }

    /// Counts every change of what waits: the unparking loops read it to act at once when an app can send again,
    /// rather than on their next round.
    public var changeCount: Int { changeCounter.load(ordering: .acquiring) }

    /// Whether `app` cannot send now (its newly claimed messages are parked).
    public func isWaiting(_ app: App) -> Bool {
        guard anyWaiting.load(ordering: .acquiring) else { return false }
        return state.withLock { $0.waitingApps[app] != nil }
    }

    /// Whether `app`'s messages of `messageClass` cannot be sent now: the app waits, or that class of it is held.
    public func isWaiting(_ app: App, messageClass: MessageClass) -> Bool {
        guard anyWaiting.load(ordering: .acquiring) else { return false }
        return state.withLock { $0.waitingApps[app] != nil || $0.heldClasses[app]?[messageClass] != nil }
    }

    /// Why `app`'s messages of `messageClass` wait, and until when (nil: they do not).
    public func hold(_ app: App, messageClass: MessageClass) -> (reason: String, untilWallMillis: Int64?)? {
        guard anyWaiting.load(ordering: .acquiring) else { return nil }
        return state.withLock { state in
            if let reason = state.waitingApps[app] { return (reason, nil) }
            return state.heldClasses[app]?[messageClass].map { ($0.reason, $0.untilWallMillis) }
        }
    }

    /// The apps that wait, and why.
    public var waitingApps: [App: String] { state.withLock { $0.waitingApps } }

    /// Requests held by lanes that wait: work that takes no room from claims.
    public var waitingNotifications: Int { waitingTotal.load(ordering: .acquiring) }

    /// Ends `changes` (shutdown).
    public func finish() { changeInput.finish() }
}
