import Foundation

/// The emulator's Huawei Push Kit side as a program embedding it (a test) sees it: counters, the clock its
/// expiry and rate checks read, the access tokens issued, and the faults to change while it runs.
/// `PushEmulator.huawei`.
public final class HuaweiSide: Sendable {
    /// Deliveries per token, answers by status and code (Huawei's: "80000000", "80100000", ...), deliveries by
    /// `category`, refused tokens (`illegal_tokens` / `illegalTokens`, or all of a request answered 80300007),
    /// requests to the token endpoint (v1's OAuth). `GET /_emulator/huawei/stats`.
    public let stats: VendorStats
    /// Move it to expire access tokens and JWTs without waiting; freeze it to hold a rate window still.
    public let clock: VendorClock
    /// The v1 access tokens the token endpoint issued.
    public let accessTokens: AccessTokenRegistry
    private let injector: VendorFaultInjector

    init(stats: VendorStats, clock: VendorClock, accessTokens: AccessTokenRegistry, injector: VendorFaultInjector) {
        self.stats = stats
        self.clock = clock
        self.accessTokens = accessTokens
        self.injector = injector
    }

    public var faults: VendorFaults { injector.faults }

    public func setFaults(_ faults: VendorFaults) { injector.set(faults) }

    /// Changes some faults, e.g. `updateFaults { $0.flowControl = true }`.
    public func updateFaults(_ change: (inout VendorFaults) -> Void) { injector.update(change) }

    /// The next `count` sends that pass their checks get `code` (any code `HuaweiAnswer` knows but 80000000, or
    /// "503" for flow control; 80100000 refuses the first token, 80300007 all). False for an unknown code.
    @discardableResult
    public func failNext(_ count: Int, with code: String) -> Bool {
        guard HuaweiAnswer.injectable(code) else { return false }
        injector.queue(code, count: count)
        return true
    }

    /// Every v1 access token issued so far is expired: their next send gets 401 / 80200003.
    public func expireAccessTokens() { accessTokens.revokeAll() }

    /// An access token for `appID` as the token endpoint would issue it (tests that are not about the exchange).
    public func issueAccessToken(appID: String) -> String { accessTokens.issue(clientEmail: appID, now: clock.now).token }
}

extension PushEmulator {
    /// Huawei Push Kit (OAuth token endpoint, v1 and v3 sends): counters, clock and faults, changeable while running.
    public var huawei: HuaweiSide { services.service(HuaweiCore.self).side }
}
