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
        for known in stored where known.utf8.elementsEqual(text.utf8) { return known }
        if stored.count >= Self.capacity { stored.removeAll(keepingCapacity: true) }
        stored.append(text)
        return text
    }
}
