import Foundation

/// The emulator's Huawei Push Kit side as a program embedding it (a test) sees it: counters, the clock its
/// expiry and rate checks read, the access tokens issued, and the faults to change while it runs.
/// `PushEmulator.huawei`.
public final class HuaweiSide: Sendable {
    /// Deliveries per token, answers by status and code, requests to the token endpoint.
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

/// Everything Huawei's paths share across connections: the token endpoint, v1 and v3 sends, counters.
struct HuaweiCore: Sendable {
    let tokenEndpoint: HuaweiTokenEndpoint
    let v1: HuaweiSendJudge
    let v3: HuaweiV3SendJudge
    let shared: HuaweiShared
    let receiptDeadPrefixes: [String]

    init(settings: EmulatorConfiguration.HuaweiSettings) throws {
        receiptDeadPrefixes = settings.receiptDeadPrefixes
        let registry = AccessTokenRegistry(lifetimeSeconds: settings.accessTokenLifetimeSeconds)
        shared = HuaweiShared(clock: VendorClock(), faults: VendorFaultInjector(settings.faults), rate: VendorRate(),
                              stats: VendorStats(), tokenAnswers: settings.tokenAnswers)
        tokenEndpoint = HuaweiTokenEndpoint(settings: settings, registry: registry, stats: shared.stats)
        v1 = HuaweiSendJudge(settings: settings, registry: registry, shared: shared)
        v3 = HuaweiV3SendJudge(verifier: try HuaweiJWTVerifier(settings: settings), shared: shared)
    }

    var side: HuaweiSide {
        HuaweiSide(stats: shared.stats, clock: shared.clock, accessTokens: tokenEndpoint.registry, injector: shared.faults)
    }

    /// The answer to a request on one of Huawei's paths; nil for other paths.
    func answer(_ request: IncomingRequest) -> VendorResponse? {
        let json = "application/json;charset=utf-8"
        if tokenEndpoint.handles(path: request.path) {
            let (status, body) = tokenEndpoint.answer(request, now: shared.clock.now)
            return VendorResponse(status: status, headers: [("content-type", json), ("cache-control", "no-store")], body: body)
        }
        let answer: HuaweiAnswer
        if let appID = HuaweiSendJudge.app(inPath: request.path) {
            answer = v1.judge(request)
            // The receipts of what was delivered, for an app that registered a callback.
            if !answer.validatedOnly, !answer.delivered.isEmpty, let target = v1.apps[appID]?.receipts {
                HuaweiReceipts.send(for: request, appID: appID, delivered: answer.delivered, target: target,
                                    deadPrefixes: receiptDeadPrefixes, stats: shared.stats)
            }
        } else if HuaweiV3SendJudge.project(inPath: request.path) != nil {
            answer = v3.judge(request)
        } else {
            return nil
        }
        shared.stats.record(request, status: answer.status, code: answer.code, delivered: answer.delivered, refused: answer.refused,
                            validatedOnly: answer.validatedOnly, classification: answer.category,
                            second: Int64(shared.clock.now.rounded(.down)))
        return VendorResponse(status: answer.status, headers: [("content-type", json)], body: answer.json)
    }
}
