import Foundation

/// The Huawei Push Kit side as the router sees it (`EmulatedService`), everything its paths share across
/// connections: the token endpoint, v1 and v3 sends, counters.
struct HuaweiCore: EmulatedService {
    static let vendor = "Huawei"
    static let title = "Huawei Push Kit"

    let tokenEndpoint: HuaweiTokenEndpoint
    let v1: HuaweiSendJudge
    let v3: HuaweiV3SendJudge
    let shared: HuaweiShared
    let receiptDeadPrefixes: [String]
    /// What `PushEmulator.huawei` hands out.
    let side: HuaweiSide

    init(configuration: EmulatorConfiguration) throws {
        let settings = configuration.huawei
        receiptDeadPrefixes = settings.receiptDeadPrefixes
        let registry = AccessTokenRegistry(lifetimeSeconds: settings.accessTokenLifetimeSeconds)
        shared = HuaweiShared(clock: VendorClock(), faults: VendorFaultInjector(settings.faults), rate: VendorRate(),
                              stats: VendorStats(), tokenAnswers: settings.tokenAnswers)
        tokenEndpoint = HuaweiTokenEndpoint(settings: settings, registry: registry, stats: shared.stats)
        v1 = HuaweiSendJudge(settings: settings, registry: registry, shared: shared)
        v3 = HuaweiV3SendJudge(verifier: try HuaweiJWTVerifier(settings: settings), shared: shared)
        side = HuaweiSide(stats: shared.stats, clock: shared.clock, accessTokens: registry, injector: shared.faults)
    }

    var stats: VendorStats { shared.stats }

    var faults: VendorFaults { shared.faults.faults }

    /// The v1 and v3 send paths, and the token endpoint's (anything under `/oauth2/`). Huawei's v1
    /// `/v1/<app>/messages:send` looks like FCM's.
    func handles(path: String) -> Bool {
        HuaweiSendJudge.app(inPath: path) != nil || HuaweiV3SendJudge.project(inPath: path) != nil || path.hasPrefix("/oauth2/")
    }

    /// Its token endpoints answer at once, as they always did: the latency fault is the sends'.
    func isAuthEndpoint(path: String) -> Bool { path.hasPrefix("/oauth2/") }

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
