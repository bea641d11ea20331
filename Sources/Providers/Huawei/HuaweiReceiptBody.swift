import ProviderKit
import PushCore

/// The body of a Huawei receipt callback: `{"statuses":[{"biTag":"<our tag>","appid":"…","token":"…","status":0,
/// "timestamp":1700000000000,"requestId":"…"}, …]}`, at most 100 statuses a call. Only what a receipt needs is
/// read; a status without a token is left out, a body of another shape is refused.
struct HuaweiReceiptBody {
    struct Status: Equatable {
        var appID: String?
        var token: String
        var code: Int
        var biTag: String?
        var requestID: String?
        var timestampMillis: Int64?
    }

    /// Huawei sends at most 100 statuses a call.
    static let mostStatuses = 100

    let statuses: [Status]

    static func parse(_ body: [UInt8]) -> Result<HuaweiReceiptBody, ReceiptRefusal> {
        guard let document = try? JSONParser.parse(body, maxDepth: 8) else {
            return .failure(ReceiptRefusal(.malformed, "the body is not JSON"))
        }
        guard let list = document["statuses"]?.arrayValue else {
            return .failure(ReceiptRefusal(.malformed, "the body has no statuses list"))
        }
        guard list.count <= mostStatuses else {
            return .failure(ReceiptRefusal(.tooLarge, "\(list.count) statuses in one call, at most \(mostStatuses)"))
        }
        var statuses: [Status] = []
        for entry in list {
            guard let token = entry["token"]?.stringValue, !token.isEmpty, let code = ReceiptNumber.integer(entry["status"]) else {
                return .failure(ReceiptRefusal(.malformed, "a status lacks its token or its status code"))
            }
            statuses.append(Status(appID: text(entry["appid"]), token: token, code: Int(code), biTag: text(entry["biTag"]),
                                   requestID: text(entry["requestId"]), timestampMillis: ReceiptNumber.integer(entry["timestamp"])))
        }
        return .success(HuaweiReceiptBody(statuses: statuses))
    }

    /// A string, or a number's literal (an id sent as a number); nil for anything else or an empty string.
    private static func text(_ value: JSONValue?) -> String? {
        switch value {
        case .string(let text)?: return text.isEmpty ? nil : text
        case .number(let literal)?: return literal
        default: return nil
        }
    }
}

extension HuaweiReceiptBody.Status {
    /// Huawei's receipt codes in the shared set: 0 delivered; 2 (the app uninstalled) and 5 (the token is not the
    /// current user's) make the token dead; 6 notifications off; 102 dropped by frequency control; 201 held
    /// (controlled) by the device; 10 (inactive for 30 days), 15 (replaced by a newer message) and any other only
    /// counted.
    var status: ReceiptStatus {
        switch code {
        case 0: return .delivered
        case 2, 5: return .dead
        case 6: return .disabled
        case 102: return .overQuota
        case 201: return .filtered
        default: return .other
        }
    }
}
