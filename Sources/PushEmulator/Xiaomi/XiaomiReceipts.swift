import Foundation

/// Xiaomi's receipts for a send whose form asks for them (`extra.callback`): the delivered regIds with a
/// `receiptDeadPrefixes` prefix in a callback of type 16 (target invalid), the others in one of type 1 (delivered),
/// each only if `extra.callback.type` has that bit (none given: both). The body is form-encoded `data=<JSON>`, the
/// JSON keyed by the message's id: `{"<id>":{"param":…,"type":16,"targets":"r1,r2","jobkey":…,"barStatus":"Enable",
/// "timestamp":…}}`.
enum XiaomiReceipts {
    static func send(form: [String: String], delivered: [String], deadPrefixes: [String], stats: VendorStats) {
        guard let url = form["extra.callback"], !delivered.isEmpty else { return }
        let wanted = form["extra.callback.type"].flatMap(Int.init) ?? (1 + 16)
        let dead = delivered.filter { token in deadPrefixes.contains { token.hasPrefix($0) } }
        let alive = delivered.filter { token in !deadPrefixes.contains { token.hasPrefix($0) } }
        let messageID = "slm" + String(UInt64.random(in: .min ... .max), radix: 36)
        for (type, targets) in [(16, dead), (1, alive)] where !targets.isEmpty && wanted & type != 0 {
            var report: [String: Any] = [
                "type": type, "targets": targets.joined(separator: ","), "barStatus": "Enable",
                "timestamp": Int64(Date().timeIntervalSince1970 * 1000),
            ]
            if let param = form["extra.callback.param"] { report["param"] = param }
            if let jobKey = form["extra.jobkey"] { report["jobkey"] = jobKey }
            let json = (try? JSONSerialization.data(withJSONObject: [messageID: report], options: [.sortedKeys])) ?? Data()
            let body = "data=" + (String(decoding: json, as: UTF8.self).addingPercentEncoding(withAllowedCharacters: formSafe) ?? "")
            ReceiptPoster.post(url, headers: [("Content-Type", "application/x-www-form-urlencoded")], body: Array(body.utf8),
                               tokens: targets.count, stats: stats)
        }
    }

    private static let formSafe = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~")
}
