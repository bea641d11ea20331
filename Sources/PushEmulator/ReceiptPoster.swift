import COpenSSL
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Posts a vendor side's receipt callbacks, off the thread that answered the send (as the vendors report later, apart
/// from the answer), over plain HTTP or HTTPS as the URL says. Each outcome is counted in the side's stats
/// (`receiptsAnswered`, `receiptsFailed`), which is what a test waits for.
enum ReceiptPoster {
    static func post(_ url: String, headers: [(String, String)], body: [UInt8], tokens: Int, stats: VendorStats) {
        guard let target = URL(string: url) else {
            stats.receiptPosted(ok: false, tokens: tokens)
            return
        }
        var request = URLRequest(url: target)
        request.httpMethod = "POST"
        request.timeoutInterval = 10
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let payload = Data(body)
        Task {
            let answer = try? await URLSession.shared.upload(for: request, from: payload)
            let status = (answer?.1 as? HTTPURLResponse)?.statusCode ?? 0
            stats.receiptPosted(ok: (200..<300).contains(status), tokens: tokens)
        }
    }

    /// HMAC-SHA256 of `message` under `key` (a vendor's callback signature).
    static func hmacSHA256(key: String, message: String) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let keyBytes = Array(key.utf8) + [0], messageBytes = Array(message.utf8) + [0]
        _ = keyBytes.withUnsafeBytes { keyBuffer in
            messageBytes.withUnsafeBufferPointer { messageBuffer in
                out.withUnsafeMutableBufferPointer { outBuffer in
                    HMAC(EVP_sha256(), keyBuffer.baseAddress, Int32(keyBytes.count - 1), messageBuffer.baseAddress, messageBytes.count - 1,
                         outBuffer.baseAddress, &length)
                }
            }
        }
        return Array(out.prefix(Int(length)))
    }
}
