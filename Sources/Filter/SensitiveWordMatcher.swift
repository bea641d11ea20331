/// Aho-Corasick automaton over `TextNormalizer` streams: one pass over a text finds the listed entries in
/// it, in time linear in the text's length whatever the size of the list.
public struct SensitiveWordMatcher: Sendable {
    /// Transitions keyed by (state << 21 | scalar); scalars fit in 21 bits.
    private let next: TransitionTable
    /// The root's transitions for the BMP as a plain array (0: stay at the root): every failure chain
    /// ends there, so most steps finish with one array read instead of a hash probe.
    private let rootRow: [Int32]
    private let failure: [Int32]
    /// The entry recognised on reaching a state (the longest), -1 for none.
    private let terminal: [Int32]
    /// The nearest state down the failure chain that recognises an entry (-1: none): all matches ending here.
    private let outputLink: [Int32]
    public let entries: [WordListEntry]

    public var isEmpty: Bool { entries.isEmpty }
    public var words: [String] { entries.map(\.text) }

    public init(words: [String]) {
        self.init(entries: words.compactMap(WordListEntry.init))
    }

    public init(entries list: [WordListEntry]) {
        var next: [UInt64: Int32] = [:]
        var terminal: [Int32] = [-1]
        var children: [[(UInt32, Int32)]] = [[]]
        var kept: [WordListEntry] = []
        for entry in list {
            var state: Int32 = 0
            for value in entry.pattern {
                let key = UInt64(state) << 21 | UInt64(value)
                if let existing = next[key] {
                    state = existing
                } else {
                    let fresh = Int32(terminal.count)
                    terminal.append(-1)
                    children.append([])
                    next[key] = fresh
                    children[Int(state)].append((value, fresh))
                    state = fresh
                }
            }
            if terminal[Int(state)] < 0 {
                terminal[Int(state)] = Int32(kept.count)
                kept.append(entry)
            }
        }
        // Breadth-first: each state's failure link is the longest proper suffix that is also a prefix.
        var failure = [Int32](repeating: 0, count: terminal.count)
        var outputLink = [Int32](repeating: -1, count: terminal.count)
        var queue: [Int32] = children[0].map { $0.1 }
        var head = 0
        while head < queue.count {
            let state = queue[head]
            head += 1
            for (value, child) in children[Int(state)] {
                var target: Int32 = 0
                if state != 0 {
                    var fallback = failure[Int(state)]
                    while true {
                        if let hop = next[UInt64(fallback) << 21 | UInt64(value)] { target = hop; break }
                        if fallback == 0 { break }
                        fallback = failure[Int(fallback)]
                    }
                }
                failure[Int(child)] = target
                outputLink[Int(child)] = terminal[Int(target)] >= 0 ? target : outputLink[Int(target)]
                queue.append(child)
            }
        }
        var rootRow = [Int32](repeating: 0, count: 0x10000)
        for (value, child) in children[0] where value < 0x10000 { rootRow[Int(value)] = child }
        self.rootRow = rootRow
        self.next = TransitionTable(next)
        self.failure = failure
        self.terminal = terminal
        self.outputLink = outputLink
        self.entries = kept
    }

    @inline(__always)
    private func step(_ state: Int32, _ value: UInt32) -> Int32 {
        var state = state
        while state != 0 {
            if let hop = next[UInt64(state) << 21 | UInt64(value)] { return hop }
            state = failure[Int(state)]
        }
        if value < 0x10000 { return rootRow[Int(value)] }
        return next[UInt64(value)] ?? 0
    }

    /// The first listed entry found in the stream, or nil.
    func firstMatch(in stream: [UInt32]) -> WordListEntry? {
        guard !entries.isEmpty else { return nil }
        var state: Int32 = 0
        for value in stream {
            state = step(state, value)
            let found = terminal[Int(state)] >= 0 ? terminal[Int(state)] : (outputLink[Int(state)] >= 0 ? terminal[Int(outputLink[Int(state)])] : -1)
            if found >= 0 { return entries[Int(found)] }
        }
        return nil
    }

    /// Every occurrence: (entry, first index, last index) in the stream.
    func allMatches(in stream: [UInt32]) -> [(entry: Int, start: Int, end: Int)] {
        guard !entries.isEmpty else { return [] }
        var found: [(entry: Int, start: Int, end: Int)] = []
        var state: Int32 = 0
        for (position, value) in stream.enumerated() {
            state = step(state, value)
            var hit = terminal[Int(state)] >= 0 ? state : outputLink[Int(state)]
            while hit >= 0 {
                let entry = Int(terminal[Int(hit)])
                found.append((entry, position - entries[entry].pattern.count + 1, position))
                hit = outputLink[Int(hit)]
            }
        }
        return found
    }

    /// The first listed entry in `text` (after folding), or nil.
    public func firstMatch(in text: String) -> String? {
        firstMatch(in: TextNormalizer.stream(text))?.text
    }
}
