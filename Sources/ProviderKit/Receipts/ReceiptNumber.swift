import PushCore

/// A whole number in a receipt body (a status code, a time in ms), as a number or a string of digits: the services'
/// examples write numbers, some relays quote them. Nil for anything else, and for more digits than an Int64 holds
/// (never a trap on outside input).
public enum ReceiptNumber {
    public static func integer(_ value: JSONValue?) -> Int64? {
        let literal: String
        switch value {
        case .number(let text)?: literal = text
        case .string(let text)?: literal = text
        default: return nil
        }
        guard literal.utf8.count <= 19 else { return nil }
        return Int64(literal)
    }
}
