import Foundation

/// One answer of a vendor side, ready to write on an HTTP/2 stream or an HTTP/1.1 connection.
struct VendorResponse: Sendable {
    var status: Int
    var headers: [(String, String)]
    var body: String
    /// How long to wait before writing it (`VendorFaults.latencyMillis`).
    var delayMillis = 0
}

/// The China vendor sides (Huawei Push Kit, Xiaomi MiPush) behind one router: `answer` takes any request and
/// answers those on their paths (and their stats pages, `GET /_emulator/huawei/stats`, `/_emulator/xiaomi/stats`),
/// nil for the rest (APNs's and FCM's).
struct ChinaVendors: Sendable {
    let huawei: HuaweiCore
    let xiaomi: XiaomiCore

    init(configuration: EmulatorConfiguration) throws {
        huawei = try HuaweiCore(settings: configuration.huawei)
        xiaomi = try XiaomiCore(settings: configuration.xiaomi)
    }

    /// Whether a path is a vendor's (its streams are not FCM's, though Huawei's `/v1/<app>/messages:send` looks alike).
    static func handles(path: String) -> Bool {
        HuaweiSendJudge.app(inPath: path) != nil || HuaweiV3SendJudge.project(inPath: path) != nil
            || XiaomiSendJudge.handles(path: path) || path.hasPrefix("/oauth2/") || path.hasPrefix("/_emulator/huawei/")
            || path.hasPrefix("/_emulator/xiaomi/")
    }

    func answer(_ request: IncomingRequest) -> VendorResponse? {
        if request.method == "GET" && request.path == "/_emulator/huawei/stats" {
            return VendorResponse(status: 200, headers: [("content-type", "application/json")], body: huawei.shared.stats.json)
        }
        if request.method == "GET" && request.path == "/_emulator/xiaomi/stats" {
            return VendorResponse(status: 200, headers: [("content-type", "application/json")], body: xiaomi.stats.json)
        }
        let latency: Int
        var response: VendorResponse
        if let answered = huawei.answer(request) {
            (response, latency) = (answered, huawei.shared.faults.faults.latencyMillis)
        } else if let answered = xiaomi.answer(request) {
            (response, latency) = (answered, xiaomi.judge.faults.faults.latencyMillis)
        } else {
            return nil
        }
        // Sends only: a token endpoint answers at once.
        if !request.path.hasPrefix("/oauth2/") { response.delayMillis = min(max(0, latency), DelayedAnswers.longestDelayMillis) }
        return response
    }
}
