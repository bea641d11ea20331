/// The emulator's vivo Push side as a test sees it: counters, the clock its auth and quota day read, the faults.
/// `PushEmulator.vivo`.
public final class VivoSide: Sendable {
    /// Deliveries per regId (a `requestId` sent again delivers nothing twice), answers by result, deliveries by
    /// `category`, auth calls. `GET /_emulator/vivo/stats`.
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

    /// The next `count` calls (sends, saves, list pushes) that pass their checks get vivo result `code`.
    public func failNext(_ count: Int, with code: Int) { injector.queue(String(code), count: count) }
}

extension PushEmulator {
    /// vivo Push: counters, clock and faults, changeable while running.
    public var vivo: VivoSide { services.service(VivoCore.self).side }
}
