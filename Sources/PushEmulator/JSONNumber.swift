import Foundation

/// What a JSON number parsed by Foundation is, for the sides' type checks.
enum JSONNumber {
    /// JSON true or false. Foundation reads every JSON number as an NSNumber that `is Bool` (1 too), so the
    /// number's own type decides: a boolean is stored as a char (`c`), JSON never makes one otherwise.
    static func isBool(_ value: Any) -> Bool {
        guard let number = value as? NSNumber else { return false }
        return String(cString: number.objCType) == "c"
    }

    /// A JSON number without a fraction that is not a boolean.
    static func isInteger(_ value: Any) -> Bool {
        guard let number = value as? NSNumber, !isBool(value) else { return false }
        return number.doubleValue == number.doubleValue.rounded() && abs(number.doubleValue) < 2_147_483_648
    }
}
