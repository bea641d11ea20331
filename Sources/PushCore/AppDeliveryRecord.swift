import Synchronization

/// One app's record of what its answers said, shared by the app's lanes (each on a thread of its own): when a
/// request of the app last delivered anything, and how many of the tokens answered in the current minute were
/// named dead. `AllTokensRefusedRule` reads it to tell a dead device from a configuration that refuses every
/// device (a wrong app, project or region).
///
/// Times are UNIX milliseconds, so that the last delivery can be shared with the other workers through Redis
/// (`FleetDeliverySync`, `mergeFleetDelivery`): a worker just started then knows the app delivered a minute ago on a
/// peer. One per app in the process (`of(provider:app:)`), whatever lanes or modules ask.
public final class AppDeliveryRecord: Sendable {
    /// How long an app must have delivered nothing for a request whose every token is refused to be taken as a
    /// refusal of the app rather than of its devices: 10 minutes.
    public static let quietMillis: Int64 = 600_000
    /// The surge rule: more than half of the tokens answered within one minute named dead, and at least this many.
    public static let surgeMinimum = 1000
    static let surgeWindowMillis: Int64 = 60_000

    private let lastDelivered = Atomic<Int64>(.min)
    private let minute = Mutex(MinuteCounts())

    private struct MinuteCounts {
        var window: Int64 = .min
        var answered = 0
        var dead = 0
    }

    public init() {}

    private static let registry = Mutex([String: AppDeliveryRecord]())

    /// The process's record of `app` of `provider` (made on first use).
    public static func of(provider: PushProvider, app: String) -> AppDeliveryRecord {
        of(fleetKey: fleetKey(provider: provider, app: app))
    }

    /// The process's record by its field in the fleet's hash (made on first use: the fleet's times are read before
    /// the lanes start).
    public static func of(fleetKey key: String) -> AppDeliveryRecord {
        registry.withLock { records in
            if let record = records[key] { return record }
            let made = AppDeliveryRecord()
            records[key] = made
            return made
        }
    }

    /// Every record of the process, by `fleetKey`.
    public static var all: [String: AppDeliveryRecord] { registry.withLock { $0 } }

    /// `<provider>:<topic>`: the record's field in the fleet's hash.
    public static func fleetKey(provider: PushProvider, app: String) -> String { "\(provider.rawValue):\(app)" }

    /// A request of the app delivered at least one token at `nowMillis` (the latest wins: lanes answer out of order).
    public func delivered(atMillis nowMillis: Int64) {
        lastDelivered.max(nowMillis, ordering: .relaxed)
    }

    /// The last delivery another worker of the fleet recorded (kept if it is later than this worker's own).
    public func mergeFleetDelivery(atMillis millis: Int64) {
        lastDelivered.max(millis, ordering: .relaxed)
    }

    /// The last delivery this record knows of, nil for none.
    public var lastDeliveredMillis: Int64? {
        let last = lastDelivered.load(ordering: .relaxed)
        return last == .min ? nil : last
    }

    /// Whether the app delivered anything within `quietMillis` before `nowMillis`. Never counts as "not recently".
    public func deliveredRecently(nowMillis: Int64) -> Bool {
        guard let last = lastDeliveredMillis else { return false }
        let (since, overflow) = nowMillis.subtractingReportingOverflow(last)
        return !overflow && since < Self.quietMillis
    }

    /// Counts an answer's tokens (`answered`, of which `dead` were named dead) in the current minute, and says
    /// whether more than half of the app's tokens answered in it were named dead, at least `surgeMinimum`: what a
    /// console change or a wrong region looks like on an app that still delivers to some devices.
    public func noteAnswered(_ answered: Int, dead: Int, nowMillis: Int64) -> Bool {
        let window = nowMillis >= 0 ? nowMillis / Self.surgeWindowMillis : -1
        return minute.withLock { counts in
            if counts.window != window { counts = MinuteCounts(window: window) }
            counts.answered &+= max(0, answered)
            counts.dead &+= max(0, dead)
            return counts.dead >= Self.surgeMinimum && counts.dead > counts.answered / 2
        }
    }
}
