import Foundation

/// The Xiaomi MiPush side as the router sees it (`EmulatedService`), everything its paths share across connections.
struct XiaomiCore: EmulatedService {
    static let vendor = "Xiaomi"
    static let title = "Xiaomi MiPush"

    let judge: XiaomiSendJudge
    let stats = VendorStats()
    let receiptDeadPrefixes: [String]
    /// What `PushEmulator.xiaomi` hands out.
    let side: XiaomiSide

    init(configuration: EmulatorConfiguration) throws {
        let settings = configuration.xiaomi
        receiptDeadPrefixes = settings.receiptDeadPrefixes
        judge = XiaomiSendJudge(
            apps: Dictionary(settings.apps.map { ($0.appSecret, $0) }, uniquingKeysWith: { first, _ in first }),
            tokenAnswers: settings.tokenAnswers, clock: VendorClock(), faults: VendorFaultInjector(settings.faults),
            rate: VendorRate(), quota: try XiaomiQuota(reset: settings.quotaReset, apps: settings.apps))
        side = XiaomiSide(stats: stats, clock: judge.clock, injector: judge.faults, quota: judge.quota)
    }

    var faults: VendorFaults { judge.faults.faults }

    func handles(path: String) -> Bool { XiaomiSendJudge.handles(path: path) }

    func answer(_ request: IncomingRequest) -> VendorResponse? {
        guard XiaomiSendJudge.handles(path: request.path) else { return nil }
        let answer = judge.judge(request)
        if answer.code == 0, !answer.delivered.isEmpty {
            XiaomiReceipts.send(form: FormFields.parse(request.body), delivered: answer.delivered,
                                deadPrefixes: receiptDeadPrefixes, stats: stats)
        }
        stats.record(request, status: answer.status, code: String(answer.code), delivered: answer.delivered,
                     refused: answer.badRegIDs.count, validatedOnly: false, classification: answer.channel,
                     second: Int64(judge.clock.now.rounded(.down)))
        var headers = [("content-type", "application/json;charset=utf-8")]
        if answer.status == 503, let seconds = judge.faults.faults.retryAfterSeconds { headers.append(("retry-after", String(seconds))) }
        return VendorResponse(status: answer.status, headers: headers, body: answer.json)
    }
}
