/// The emulator's OPPO Push side as a test sees it: counters, the clock its auth and quota day read, the faults.
/// `PushEmulator.oppo`.
public final class OPPOSide: Sendable {
    /// Deliveries per regId (an `app_message_id` counts once per target), answers by code, deliveries by
    /// `category`, auth calls. `GET /_emulator/oppo/stats`.
    public let stats: VendorStats
    public let clock: VendorClock
    private let injector: VendorFaultInjector

    init(stats: VendorStats, clock: VendorClock, injector: VendorFaultInjector) {
        self.stats = stats
        self.clock = clock
        self.injector = injector
    }

    public var faults: VendorFaults { injector.faults }

    public func updateFaults(_ change: (inout VendorFaults) -> Void) { injector.update(change) }

    /// The next `count` sends that pass their checks get OPPO code `code` (-2, 11, 33, ...).
    public func failNext(_ count: Int, with code: Int) { injector.queue(String(code), count: count) }
}

extension PushEmulator {
    /// OPPO Push: counters, clock and faults, changeable while running.
    public var oppo: OPPOSide { services.service(OPPOCore.self).side }
}
