/// Comparisons of secrets whose time does not depend on where they differ: a signature or a secret path compared
/// byte by byte with an early exit would tell a caller, by its answer's time, how much of a guess was right.
public enum ConstantTime {
    /// Whether `a` and `b` are equal, in time that depends on their lengths only.
    public static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        var difference = UInt8(truncatingIfNeeded: a.count ^ b.count)
        if a.count != b.count { difference |= 1 }
        let count = min(a.count, b.count)
        for index in 0..<count { difference |= a[index] ^ b[index] }
        return difference == 0
    }

    public static func equal(_ a: String, _ b: String) -> Bool { equal(Array(a.utf8), Array(b.utf8)) }
}
