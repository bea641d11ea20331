/// One line of a words or allow file, compiled to the pattern the matcher looks for in a `TextNormalizer`
/// stream. Syntax (documented in the README):
/// - `word`: the whole word (`ass` does not match `classic`); several words match as a phrase (`bad word`).
/// - `word*`: words that start with it (`spam*`: spam, spammer, spamming).
/// - `*word`: words that end with it.
/// - `*word*`: anywhere, even inside words (the old behaviour; use with an allow list).
/// Words in unspaced scripts (Chinese, Japanese, Thai, ...) match anywhere, stars or not.
public struct WordListEntry: Sendable, Equatable {
    public let text: String
    let pattern: [UInt32]

    /// Nil for a line that folds to nothing (only punctuation, say).
    public init?(_ line: String) {
        var core = Substring(line)
        let openStart = core.hasPrefix("*")
        if openStart { core = core.dropFirst() }
        let openEnd = core.hasSuffix("*")
        if openEnd { core = core.dropLast() }
        var pattern = TextNormalizer.stream(String(core))
        guard pattern.count > 2 else { return nil }
        let unspacedOnly = pattern.allSatisfy { $0 == TextNormalizer.boundary || FoldingTable.isUnspaced($0) }
        if openEnd || unspacedOnly { pattern.removeLast() }
        if openStart || unspacedOnly { pattern.removeFirst() }
        self.text = line
        self.pattern = pattern
    }
}
