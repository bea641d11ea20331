import Foundation

/// Huawei's receipts for a v1 send that delivered tokens, for an app with a receipt target: one status per delivered
/// token (2, "uninstalled", for a token with a `receiptDeadPrefixes` prefix, else 0), at most 100 per callback, with
/// the request's `android.bi_tag`, signed as Huawei signs them (`X-HUAWEI-CALLBACK-ID: timestamp=<ms>;nonce=<text>;
/// value=Base64(HMAC-SHA256(secret, timestamp + nonce + userName))`), the time the wall clock's.
enum HuaweiReceipts {
    static let statusesPerCallback = 100

    static func send(for request: IncomingRequest, appID: String, delivered: [String], target: EmulatorConfiguration.ReceiptTarget,
                     deadPrefixes: [String], stats: VendorStats) {
        let document = (try? JSONSerialization.jsonObject(with: Data(request.body))) as? [String: Any]
        let message = document?["message"] as? [String: Any]
        let biTag = (message?["android"] as? [String: Any])?["bi_tag"] as? String
        let requestID = "emu" + String(UInt64.random(in: .min ... .max), radix: 36)
        var start = 0
        while start < delivered.count {
            let part = delivered[start..<min(delivered.count, start + statusesPerCallback)]
            start += part.count
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            let statuses: [[String: Any]] = part.map { token in
                var status: [String: Any] = [
                    "appid": appID, "token": token, "timestamp": now, "requestId": requestID,
                    "status": deadPrefixes.contains { token.hasPrefix($0) } ? 2 : 0,
                ]
                if let biTag { status["biTag"] = biTag }
                return status
            }
            let body = (try? JSONSerialization.data(withJSONObject: ["statuses": statuses], options: [.sortedKeys])) ?? Data()
            let timestamp = String(now), nonce = String(UInt64.random(in: .min ... .max), radix: 36)
            let value = Data(ReceiptPoster.hmacSHA256(key: target.secret, message: timestamp + nonce + target.userName)).base64EncodedString()
            ReceiptPoster.post(target.url, headers: [
                ("Content-Type", "application/json"), ("X-HUAWEI-CALLBACK-ID", "timestamp=\(timestamp);nonce=\(nonce);value=\(value)"),
            ], body: Array(body), tokens: part.count, stats: stats)
        }
    }
}
