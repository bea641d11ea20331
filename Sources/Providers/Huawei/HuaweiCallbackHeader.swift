import ProviderKit

/// `X-HUAWEI-CALLBACK-ID: timestamp=<ms>;nonce=<text>;value=<Base64 HMAC>`, the signature of a receipt callback.
/// Parsed strictly enough that nothing but those three parts is read: parts may come in any order, with spaces
/// around them, each once.
struct HuaweiCallbackHeader: Equatable {
    static let name = "X-HUAWEI-CALLBACK-ID"

    /// As sent (what was signed), and as a number.
    let timestamp: String
    let timestampMillis: Int64
    let nonce: String
    let value: String

    /// A header longer than this is not Huawei's (a 13-digit time, a short nonce, 44 characters of Base64).
    static let longest = 1024

    static func parse(_ text: String?) -> Result<HuaweiCallbackHeader, ReceiptRefusal> {
        guard let text else {
            return .failure(ReceiptRefusal(.badSignature, status: 401, "no \(name) header (the callback's signature)"))
        }
        guard text.utf8.count <= longest else { return .failure(ReceiptRefusal(.malformed, "\(name) is over \(longest) bytes")) }
        var parts: [String: String] = [:]
        for part in text.split(separator: ";") {
            let trimmed = part.trimmingCharacters(in: .whitespaces)
            guard let equals = trimmed.firstIndex(of: "=") else { continue }
            let key = trimmed[..<equals].lowercased(), value = String(trimmed[trimmed.index(after: equals)...])
            guard parts[key] == nil else { return .failure(ReceiptRefusal(.malformed, "\(name) names \(key) twice")) }
            parts[key] = value
        }
        guard let timestamp = parts["timestamp"], let nonce = parts["nonce"], let value = parts["value"], !value.isEmpty else {
            return .failure(ReceiptRefusal(.badSignature, status: 401, "\(name) lacks timestamp, nonce or value"))
        }
        // Digits only, at most 18 of them: a number that fits Int64 without a sign.
        guard !timestamp.isEmpty, timestamp.utf8.count <= 18, timestamp.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
              let millis = Int64(timestamp) else {
            return .failure(ReceiptRefusal(.malformed, "\(name)'s timestamp is not UNIX milliseconds"))
        }
        return .success(HuaweiCallbackHeader(timestamp: timestamp, timestampMillis: millis, nonce: nonce, value: value))
    }

    /// Whether the signed time is within `toleranceMillis` of `nowMillis`, either way (no arithmetic that can trap:
    /// both are within 0..<10^18).
    func isFresh(nowMillis: Int64, toleranceMillis: Int64) -> Bool {
        let (difference, overflow) = nowMillis.subtractingReportingOverflow(timestampMillis)
        return !overflow && difference.magnitude <= toleranceMillis.magnitude
    }
}
