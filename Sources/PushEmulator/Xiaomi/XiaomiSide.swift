import Foundation

/// The emulator's Xiaomi MiPush side as a program embedding it (a test) sees it: counters, the clock its rate
/// windows and quota day read, the quotas, and the faults to change while it runs. `PushEmulator.xiaomi`.
public final class XiaomiSide: Sendable {
    /// Deliveries per token, answers by status and code (Xiaomi's: "0", "10027", ...), deliveries by
    /// `extra.channel_id`, refused regIds (`bad_regids`). `GET /_emulator/xiaomi/stats`.
    public let stats: VendorStats
    /// Freeze it to hold a rate window still; `startNextDay()` moves it to the next quota day.
    public let clock: VendorClock
    private let injector: VendorFaultInjector
    private let quota: XiaomiQuota

    init(stats: VendorStats, clock: VendorClock, injector: VendorFaultInjector, quota: XiaomiQuota) {
        self.stats = stats
        self.clock = clock
        self.injector = injector
        self.quota = quota
    }

    public var faults: VendorFaults { injector.faults }

    public func setFaults(_ faults: VendorFaults) { injector.set(faults) }

    public func updateFaults(_ change: (inout VendorFaults) -> Void) { injector.update(change) }

    /// The next `count` sends that pass their checks get Xiaomi code `code` (any integer: 10027, 20301, 21301,
    /// ...; 503 answers HTTP 503).
    public func failNext(_ count: Int, with code: Int) { injector.queue(String(code), count: count) }

    /// Moves the clock to the start of the next Xiaomi day (`quota_reset`): every app's quota is whole again.
    public func startNextDay() { clock.advance(by: quota.nextReset(after: clock.now) - clock.now) }

    /// The Xiaomi day (days since 1970 counted from `quota_reset`) the clock is in.
    public var day: Int64 { quota.day(at: clock.now) }

    /// Messages `appSecret`'s app sent in the current Xiaomi day.
    public func messagesToday(appSecret: String) -> Int { quota.spent(app: appSecret, at: clock.now) }

    /// Changes an app's daily quota (nil: none).
    public func setDailyQuota(appSecret: String, _ messages: Int?) { quota.setLimit(app: appSecret, quota: messages) }
}

extension PushEmulator {
    /// Xiaomi MiPush (regId sends): counters, clock, quotas and faults, changeable while running.
    public var xiaomi: XiaomiSide { services.service(XiaomiCore.self).side }
}
