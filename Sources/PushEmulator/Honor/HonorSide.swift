/// The emulator's Honor Push side as a program embedding it (a test) sees it: counters, the clock its token expiry
/// and timestamp check read, the access tokens issued, and the faults to change while it runs. `PushEmulator.honor`.
public final class HonorSide: Sendable {
    /// Deliveries per token, answers by status and code ("200", "401", ...), deliveries by `importance`, dead tokens
    /// (`expireTokens`), token endpoint requests. `GET /_emulator/honor/stats`.
    public let stats: VendorStats
    public let clock: VendorClock
    public let accessTokens: AccessTokenRegistry
    private let injector: VendorFaultInjector

    init(stats: VendorStats, clock: VendorClock, accessTokens: AccessTokenRegistry, injector: VendorFaultInjector) {
        self.stats = stats
        self.clock = clock
        self.accessTokens = accessTokens
        self.injector = injector
    }

    public var faults: VendorFaults { injector.faults }

    public func updateFaults(_ change: (inout VendorFaults) -> Void) { injector.update(change) }

    /// The next `count` sends that pass their checks get Honor code `code` (401, 403, 500, ...).
    public func failNext(_ count: Int, with code: Int) { injector.queue(String(code), count: count) }
}

extension PushEmulator {
    /// Honor Push: counters, clock, access tokens and faults, changeable while running.
    public var honor: HonorSide { services.service(HonorCore.self).side }
}
