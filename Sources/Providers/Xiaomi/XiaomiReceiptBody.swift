import ProviderKit
import PushCore

/// The body of a MiPush receipt callback, as aggregators' documentation and open-source receivers show it (Xiaomi's
/// own pages do not spell it out, so it is read defensively): form-encoded `data=<JSON>`, the JSON an object keyed by
/// Xiaomi's message id:
///
/// ```json
/// {"<msgId>":{"param":"<extra.callback.param>","type":16,"targets":"regId1,regId2","jobkey":"…","barStatus":"Enable","timestamp":1700000000000}}
/// ```
///
/// Unverified, and taken as it comes: `type` may be a number or a string of digits; `targets` a comma-separated
/// string or a JSON array of strings; a whole body of JSON (no `data=`) is read as the object too. `type` is read
/// as a sum of bits, the most telling one deciding (`status`).
struct XiaomiReceiptBody {
    struct Report: Equatable {
        var messageID: String
        var param: String?
        var type: Int
        var targets: [String]
        var timestampMillis: Int64?
    }

    /// More targets than this in one call is not a callback of ours (a request holds at most 1,000 regIds).
    static let mostTargets = 10_000

    let reports: [Report]

    static func parse(_ body: [UInt8]) -> Result<XiaomiReceiptBody, ReceiptRefusal> {
        let json: [UInt8]
        if let data = FormDecoding.field("data", in: body) {
            json = Array(data.utf8)
        } else if body.first == UInt8(ascii: "{") {
            json = body
        } else {
            return .failure(ReceiptRefusal(.malformed, "the body has no data field"))
        }
        guard let document = try? JSONParser.parse(json, maxDepth: 8), let members = document.objectMembers else {
            return .failure(ReceiptRefusal(.malformed, "data is not a JSON object"))
        }
        var reports: [Report] = []
        var targetCount = 0
        for member in members {
            guard let type = ReceiptNumber.integer(member.value["type"]).flatMap({ Int(exactly: $0) }) else {
                return .failure(ReceiptRefusal(.malformed, "a report lacks its type"))
            }
            let targets = Self.targets(member.value["targets"])
            targetCount += targets.count
            guard targetCount <= mostTargets else {
                return .failure(ReceiptRefusal(.tooLarge, "over \(mostTargets) targets in one call"))
            }
            reports.append(Report(messageID: member.key, param: member.value["param"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 },
                                  type: type, targets: targets, timestampMillis: ReceiptNumber.integer(member.value["timestamp"])))
        }
        return .success(XiaomiReceiptBody(reports: reports))
    }

    private static func targets(_ value: JSONValue?) -> [String] {
        switch value {
        case .string(let text)?:
            return text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        case .array(let items)?:
            return items.compactMap(\.stringValue).filter { !$0.isEmpty }
        default:
            return []
        }
    }
}

extension XiaomiReceiptBody.Report {
    /// Xiaomi's `type` in the shared set, the most telling bit first: 16 (target invalid) makes every target dead,
    /// then 32 push disabled, 128 over the daily quota, 64 filtered, 2 clicked, 1 delivered; anything else counted
    /// as other.
    var status: ReceiptStatus {
        if type & 16 != 0 { return .dead }
        if type & 32 != 0 { return .disabled }
        if type & 128 != 0 { return .overQuota }
        if type & 64 != 0 { return .filtered }
        if type & 2 != 0 { return .clicked }
        if type & 1 != 0 { return .delivered }
        return .other
    }
}

/// Reads one field of an `application/x-www-form-urlencoded` body: `+` is a space, `%XX` a byte; a malformed escape
/// is kept as it is.
enum FormDecoding {
    static func field(_ name: String, in body: [UInt8]) -> String? {
        for pair in body.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let parts = pair.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            guard decode(parts[0]) == name else { continue }
            return parts.count > 1 ? decode(parts[1]) : ""
        }
        return nil
    }

    static func decode(_ bytes: ArraySlice<UInt8>) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "+") {
                out.append(UInt8(ascii: " "))
            } else if byte == UInt8(ascii: "%"), bytes.endIndex - index >= 3,
                      let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2]) {
                out.append(high << 4 | low)
                index += 2
            } else {
                out.append(byte)
            }
            index += 1
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
