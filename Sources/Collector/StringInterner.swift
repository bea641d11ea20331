/// Gives back one stored copy of each string seen recently, so that the thousands of messages in flight for
/// one topic share its bytes instead of each holding a copy of its own (a topic is usually longer than the 15
/// bytes Swift keeps inline). Holds a few distinct strings and starts again when full, so a flood of distinct
/// values costs a comparison each, never memory.
struct StringInterner {
    private var stored: [String] = []
    static let capacity = 16

    mutating func intern(_ text: String) -> String {
        if text.utf8.count <= 15 { return text }  // stored inline: nothing to share
        // Byte for byte: `==` would also match a differently normalised Unicode spelling and hand back its bytes.
        for known in stored where Self.sameBytes(known, text) { return known }
        if stored.count >= Self.capacity { stored.removeAll(keepingCapacity: true) }
        stored.append(text)
        return text
    }

    /// Compared over the strings' contiguous bytes (native strings always have them): stepping through the
    /// UTF-8 views' iterators was 2% of the pool threads' CPU with two topics interned per message.
    static func sameBytes(_ a: String, _ b: String) -> Bool {
        guard a.utf8.count == b.utf8.count else { return false }
        let contiguous = a.utf8.withContiguousStorageIfAvailable { left in
            b.utf8.withContiguousStorageIfAvailable { right in left.elementsEqual(right) }
        }
        return (contiguous ?? nil) ?? a.utf8.elementsEqual(b.utf8)
    }
}
