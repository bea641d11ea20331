import Foundation

/// A refused Huawei request, thrown by the checks: its answer says which code and what was wrong.
struct HuaweiRefusal: Error {
    let answer: HuaweiAnswer
    init(_ code: String, _ detail: String? = nil) { answer = .error(code, detail) }
}

/// Typed reads of a parsed JSON object for the Huawei checks (v1 and v3): a field of the wrong type is refused
/// with `code` naming the field's path. JSON null counts as absent.
struct HuaweiJSON {
    let object: [String: Any]
    let path: String
    /// The code for a field of the wrong type (v1: 80100003 "Incorrect message structure").
    let code: String

    init(_ object: [String: Any], path: String, code: String) {
        self.object = object
        self.path = path
        self.code = code
    }

    func has(_ name: String) -> Bool { value(name) != nil }

    /// The field's path for error texts: `message.android.ttl`.
    func named(_ name: String) -> String { path.isEmpty ? name : "\(path).\(name)" }

    func value(_ name: String) -> Any? {
        let found = object[name]
        return found is NSNull ? nil : found
    }

    func string(_ name: String) throws -> String? {
        guard let found = value(name) else { return nil }
        guard let text = found as? String, !JSONNumber.isBool(found) else { throw wrongType(name, "a string") }
        return text
    }

    func int(_ name: String) throws -> Int? {
        guard let found = value(name) else { return nil }
        guard JSONNumber.isInteger(found), let number = found as? NSNumber else { throw wrongType(name, "an integer") }
        return number.intValue
    }

    func bool(_ name: String) throws -> Bool? {
        guard let found = value(name) else { return nil }
        guard JSONNumber.isBool(found), let flag = found as? Bool else { throw wrongType(name, "a boolean") }
        return flag
    }

    func object(_ name: String) throws -> HuaweiJSON? {
        guard let found = value(name) else { return nil }
        guard let inner = found as? [String: Any] else { throw wrongType(name, "an object") }
        return HuaweiJSON(inner, path: named(name), code: code)
    }

    func array(_ name: String) throws -> [Any]? {
        guard let found = value(name) else { return nil }
        guard let items = found as? [Any] else { throw wrongType(name, "an array") }
        return items
    }

    func strings(_ name: String) throws -> [String]? {
        guard let items = try array(name) else { return nil }
        return try items.enumerated().map { index, item in
            guard let text = item as? String else { throw HuaweiRefusal(code, "\(named(name))[\(index)] must be a string.") }
            return text
        }
    }

    /// An integer field that must be one of `allowed`.
    func int(_ name: String, in allowed: ClosedRange<Int>, code: String? = nil) throws -> Int? {
        guard let number = try int(name) else { return nil }
        guard allowed.contains(number) else {
            throw HuaweiRefusal(code ?? "80100001", "\(named(name)) must be in \(allowed.lowerBound)...\(allowed.upperBound), got \(number).")
        }
        return number
    }

    /// A string field that must be one of `allowed`.
    func string(_ name: String, oneOf allowed: [String]) throws -> String? {
        guard let text = try string(name) else { return nil }
        guard allowed.contains(text) else {
            throw HuaweiRefusal("80100001", "\(named(name)) must be one of \(allowed.joined(separator: ", ")), got \"\(text)\".")
        }
        return text
    }

    func wrongType(_ name: String, _ expected: String) -> HuaweiRefusal {
        HuaweiRefusal(code, "\(named(name)) must be \(expected).")
    }

    /// The body parsed as a JSON object, or 80100003.
    static func parse(_ body: [UInt8], code: String) throws -> HuaweiJSON {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] else {
            throw HuaweiRefusal(code, "The body is not a JSON object.")
        }
        return HuaweiJSON(object, path: "", code: code)
    }

    /// The body's size without its tokens, as Huawei counts the 4096-byte limit: the body less each token's
    /// bytes, quotes and separating comma (an approximation: escapes inside tokens are not counted apart).
    static func sizeWithoutTokens(_ body: [UInt8], tokens: [String]) -> Int {
        body.count - tokens.reduce(0) { $0 + $1.utf8.count + 3 }
    }

    /// Huawei's categories (IM classification), v1 and v3.
    static let categories = ["IM", "VOIP", "SUBSCRIPTION", "TRAVEL", "HEALTH", "WORK", "ACCOUNT", "EXPRESS", "FINANCE",
                             "DEVICE_REMINDER", "MAIL", "PLAY_VOICE", "MARKETING"]
}
