import Foundation

/// One Huawei Push Kit answer: HTTP status and `{"code":"<string>","msg":"...","requestId":"..."}`.
///
/// Huawei documents the business codes and, apart, the HTTP statuses (200, 400, 401, 404, 500, 502, 503), not which
/// status goes with which code. The emulator sends 200 with 80000000 and 80100000, 401 with 802xxxxx, 500 with
/// 81000001, 503 for flow control and 400 with the others; senders must classify by `code`, never by status alone.
public struct HuaweiAnswer: Sendable, Equatable {
    public var status: Int
    public var code: String
    /// Plain text, or for partial failures the JSON string Huawei puts in `msg`.
    public var msg: String
    /// Tokens delivered (a token listed twice appears twice); empty for refused requests.
    public var delivered: [String] = []
    /// Tokens the answer lists as bad.
    public var refused = 0
    public var validatedOnly = false
    /// The message's `category`, "" without one.
    public var category: String?

    public var json: String {
        let requestID = String(Int64(Date().timeIntervalSince1970 * 1000)) + String(Int.random(in: 100_000...999_999))
        return #"{"code":"\#(code)","msg":"\#(JSONText.escaped(msg))","requestId":"\#(requestID)"}"#
    }

    /// Huawei's own words for each code the emulator answers (the English reference's wording where the emulator
    /// knows it); `detail` names what was wrong.
    static func error(_ code: String, _ detail: String? = nil) -> HuaweiAnswer {
        let text = texts[code] ?? "Unknown error."
        let status = Self.status(of: code)
        return HuaweiAnswer(status: status, code: code, msg: detail.map { "\(text) \($0)" } ?? text)
    }

    static func status(of code: String) -> Int {
        switch code {
        case "80000000", "80100000": return 200
        case _ where code.hasPrefix("802"): return 401
        case "81000001": return 500
        case "503": return 503
        default: return 400
        }
    }

    /// Flow control: HTTP 503. Huawei documents the status only; the body here is the emulator's.
    static let flowControl = HuaweiAnswer(status: 503, code: "503",
                                          msg: "Flow control: distribute the sending speed evenly (emulator).")

    static let texts: [String: String] = [
        "80000000": "Success",
        "80100000": "Some tokens are right, the others are illegal.",
        "80100001": "Some request parameters are invalid.",
        "80100003": "Incorrect message structure.",
        "80100004": "The message expiration time is earlier than the current time.",
        "80100013": "The collapse_key message field is invalid.",
        "80100016": "The message contains sensitive information.",
        "80100017": "A maximum of 100 topic-based messages can be sent at the same time.",
        "80100018": "The message content differs from the content sent for review.",
        "80100022": "The image has not passed verification.",
        "80200001": "Oauth authentication error.",
        "80200003": "Oauth Token expired.",
        "80200005": "JSON Web Token expired.",
        "80300002": "The current app does not have the permission to send messages.",
        "80300007": "All the tokens are invalid.",
        "80300008": "The message body size exceeds the default value (4096 bytes, tokens excluded).",
        "80300010": "The number of tokens in the message body exceeds the default value (1 to 1000).",
        "80300011": "No permission to send high-level notification messages.",
        "80300013": "The receipt URL is incorrect.",
        "80300036": "The validity period of the JSON Web Token exceeds one day.",
        "80300037": "The app is penalized and may not send messages.",
        "80600003": "Failed to request the OAuth service.",
        "81000001": "System internal error.",
    ]

    /// Codes a test may queue (`HuaweiSide.failNext`): every one above but success, and "503" (flow control).
    static func injectable(_ code: String) -> Bool { code == "503" || (texts[code] != nil && code != "80000000") }
}
