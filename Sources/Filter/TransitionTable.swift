/// The automaton's transitions, (state, scalar) -> state, in an open-addressing hash table with a
/// multiplicative hash: a Swift Dictionary's SipHash was half of the filter's time (perf profile).
struct TransitionTable: Sendable {
    private let keys: [UInt64]
    private let values: [Int32]
    private let shift: UInt64
    private let mask: Int
    private static let empty = UInt64.max

    init(_ entries: [UInt64: Int32]) {
        var bits: UInt64 = 4
        while (1 << bits) < entries.count * 2 { bits += 1 }
        let capacity = 1 << Int(bits)
        var keys = [UInt64](repeating: Self.empty, count: capacity)
        var values = [Int32](repeating: -1, count: capacity)
        shift = 64 - bits
        mask = capacity - 1
        for (key, value) in entries {
            var slot = Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> shift)
            while keys[slot] != Self.empty { slot = (slot + 1) & mask }
            keys[slot] = key
            values[slot] = value
        }
        self.keys = keys
        self.values = values
    }

    @inline(__always)
    subscript(key: UInt64) -> Int32? {
        var slot = Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> shift)
        while true {
            let found = keys[slot]
            if found == key { return values[slot] }
            if found == Self.empty { return nil }
            slot = (slot + 1) & mask
        }
    }
}
