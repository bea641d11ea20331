/// The emulator's FCM side as a program embedding it (a test) sees it: what `messages:send` received, and the
/// faults to change while it runs. `PushEmulator.fcm`.
public final class FCMSide: Sendable {
    /// Deliveries per token, answers by status and reason, peak streams per connection, the last request.
    public let stats: FCMStats
    /// The access tokens the token endpoint issued (the same object as `PushEmulator.fcmTokens`).
    public let tokens: AccessTokenRegistry
    private let injector: FCMFaultInjector

    init(stats: FCMStats, tokens: AccessTokenRegistry, injector: FCMFaultInjector) {
        self.stats = stats
        self.tokens = tokens
        self.injector = injector
    }

    /// The faults in force.
    public var faults: FCMFaults { injector.faults }

    public func setFaults(_ faults: FCMFaults) { injector.set(faults) }

    /// Changes some faults, e.g. `updateFaults { $0.quotaExceededRate = 1; $0.retryAfterSeconds = 2 }`.
    public func updateFaults(_ change: (inout FCMFaults) -> Void) { injector.update(change) }

    /// The next `count` requests that pass validation (and whose token has no scripted answer) get `errorCode`'s
    /// answer (`QUOTA_EXCEEDED`, `UNAVAILABLE`, `INTERNAL`, `UNREGISTERED`, ...; see `FCMError.named`), before any
    /// share of faults is drawn. Deterministic where a share is not. False for an unknown code.
    @discardableResult
    public func failNext(_ count: Int, with errorCode: String) -> Bool {
        guard let error = FCMError.named(errorCode) else { return false }
        injector.queue(error, count: count)
        return true
    }

    /// Every access token issued so far is revoked: their next `messages:send` gets 401 without details.
    public func revokeAccessTokens() { tokens.revokeAll() }

    /// The token endpoint answers 503 (down) or works again.
    public func setTokenEndpointDown(_ down: Bool) { tokens.setDown(down) }
}
