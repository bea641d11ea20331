import ProviderKit
import PushCore

/// MiPush's receipt callbacks (`POST /receipts/xiaomi/<secret path>`): the path's last segment names the app whose
/// secret made it (`XiaomiCallbackPath`; every app compared, each in constant time), then the reports are read and
/// each target becomes a receipt of that app. Nothing in the body chooses the app.
struct XiaomiReceiptReader: ReceiptReader {
    let provider = XiaomiModule.provider
    /// Each app's topic and secret path segment.
    let paths: [(topic: String, path: String)]

    var apps: [String] { paths.map(\.topic) }

    func read(_ request: ReceiptRequest) -> ReceiptReading {
        let segment = request.pathRemainder
        guard !segment.isEmpty else {
            return .refused(ReceiptRefusal(.badSignature, status: 401, "no secret path after /receipts/xiaomi/"))
        }
        var matched: String?
        for app in paths where ConstantTime.equal(app.path, segment) && matched == nil { matched = app.topic }
        guard let topic = matched else {
            return .refused(ReceiptRefusal(.badSignature, "the path is no app's secret callback path"))
        }
        let body: XiaomiReceiptBody
        switch XiaomiReceiptBody.parse(request.body) {
        case .success(let parsed): body = parsed
        case .failure(let refusal): return .refused(refusal)
        }
        var receipts: [Receipt] = []
        for report in body.reports {
            let status = report.status
            for target in report.targets {
                receipts.append(Receipt(app: topic, token: target, status: status, messageID: report.param ?? report.messageID,
                                        timestampMillis: report.timestampMillis))
            }
        }
        return .accepted(receipts)
    }
}
