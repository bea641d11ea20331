/// Aho-Corasick automaton over folded Unicode scalars: one pass over the text finds whether any listed
/// word occurs, in time linear in the text's length whatever the size of the list.
public struct SensitiveWordMatcher: Sendable {
    /// Transitions keyed by (state << 21 | scalar); scalars fit in 21 bits.
    private let next: [UInt64: Int32]
    private let failure: [Int32]
    /// The word (index into `words`) recognised on reaching a state, through failure links too; -1 for none.
    private let output: [Int32]
    public let words: [String]

    public var isEmpty: Bool { words.isEmpty }

    public init(words list: [String]) {
        var next: [UInt64: Int32] = [:]
        var terminal: [Int32] = [-1]
        var children: [[(UInt32, Int32)]] = [[]]
        var kept: [String] = []
        for word in list {
            let folded = TextNormalizer.fold(word)
            guard !folded.isEmpty else { continue }
            var state: Int32 = 0
            for scalar in folded {
                let key = UInt64(state) << 21 | UInt64(scalar.value)
                if let existing = next[key] {
                    state = existing
                } else {
                    let fresh = Int32(terminal.count)
                    terminal.append(-1)
                    children.append([])
                    next[key] = fresh
                    children[Int(state)].append((scalar.value, fresh))
                    state = fresh
                }
            }
            if terminal[Int(state)] < 0 {
                terminal[Int(state)] = Int32(kept.count)
                kept.append(word)
            }
        }
        // Breadth-first: each state's failure link is the longest proper suffix that is also a prefix.
        var failure = [Int32](repeating: 0, count: terminal.count)
        var output = terminal
        var queue: [Int32] = children[0].map { $0.1 }
        var head = 0
        while head < queue.count {
            let state = queue[head]
            head += 1
            for (scalar, child) in children[Int(state)] {
                var fallback = failure[Int(state)]
                var target: Int32 = 0
                if state != 0 {
                    while true {
                        if let hop = next[UInt64(fallback) << 21 | UInt64(scalar)] { target = hop; break }
                        if fallback == 0 { break }
                        fallback = failure[Int(fallback)]
                    }
                }
                failure[Int(child)] = target
                if output[Int(child)] < 0 { output[Int(child)] = output[Int(target)] }
                queue.append(child)
            }
        }
        self.next = next
        self.failure = failure
        self.output = output
        self.words = kept
    }

    /// The first listed word found in `text` (after folding), or nil.
    public func firstMatch(in text: String) -> String? {
        guard !words.isEmpty else { return nil }
        var state: Int32 = 0
        for scalar in TextNormalizer.fold(text) {
            let value = UInt64(scalar.value)
            while true {
                if let hop = next[UInt64(state) << 21 | value] { state = hop; break }
                if state == 0 { break }
                state = failure[Int(state)]
            }
            let found = output[Int(state)]
            if found >= 0 { return words[Int(found)] }
        }
        return nil
    }
}
