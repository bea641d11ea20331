/// Turns text into the stream the matcher reads: every character folded (`FoldingTable`: width, case,
/// traditional/simplified Chinese, look-alike letters, accents), words of scripts written with spaces
/// between `boundary` marks, letters of unspaced scripts (Chinese, Japanese, Thai, ...) run together.
///
/// Evasion forms fold to the plain word: ignorable characters (zero-width, format, combining) vanish
/// (`sp\u{200B}am`); a run of single letters split by spaces or punctuation is one word (`s p a m`,
/// `s.p.a.m`, `s-p-a-m`); spaces and punctuation between unspaced letters vanish (`赌 博`, `赌.博`). What is
/// not joined: words of two letters or more separated by white space or punctuation (`bad word`,
/// `bad.word`), so innocent neighbours never run together.
public enum TextNormalizer {
    /// Marks a word boundary in the stream; white space itself never appears in it.
    public static let boundary: UInt32 = 0x20

    private struct Token {
        var start: Int
        var end: Int
        var letters: Int
        var unspaced: Bool
    }

    public static func stream(_ text: String) -> [UInt32] {
        let table = FoldingTable.shared
        var folded: [UInt32] = []
        folded.reserveCapacity(text.utf8.count)
        var tokens: [Token] = []
        var sawSpace = true
        for scalar in text.unicodeScalars {
            let value = scalar.value
            let kind = value < 0x10000 ? table.kinds[Int(value)] : FoldingTable.kind(of: scalar)
            switch kind {
            case .ignorable:
                continue
            case .space, .joiner:
                sawSpace = true
                continue
            case .letter, .unspacedLetter:
                let unspaced = kind == .unspacedLetter
                if sawSpace || tokens.isEmpty || tokens[tokens.count - 1].unspaced != unspaced {
                    tokens.append(Token(start: folded.count, end: folded.count, letters: 0, unspaced: unspaced))
                }
                sawSpace = false
                if value < 0x10000 {
                    let mapped = table.folded[Int(value)]
                    if mapped & FoldingTable.multiple == 0 {
                        folded.append(mapped)
                    } else {
                        folded.append(contentsOf: table.expansions[Int(mapped & ~FoldingTable.multiple)])
                    }
                } else {
                    folded.append(contentsOf: FoldingTable.foldOutsideBMP(scalar))
                }
                tokens[tokens.count - 1].end = folded.count
                tokens[tokens.count - 1].letters += 1
            }
        }
        var out: [UInt32] = [boundary]
        out.reserveCapacity(folded.count + tokens.count + 1)
        var index = 0
        while index < tokens.count {
            let token = tokens[index]
            if isSingle(token), index + 1 < tokens.count, isSingle(tokens[index + 1]) {
                // `s p a m`: a run of single letters is one word.
                var last = index
                while last + 1 < tokens.count, isSingle(tokens[last + 1]) { last += 1 }
                for part in tokens[index...last] { out.append(contentsOf: folded[part.start..<part.end]) }
                out.append(boundary)
                index = last + 1
                continue
            }
            out.append(contentsOf: folded[token.start..<token.end])
            let joinsNext = token.unspaced && index + 1 < tokens.count && tokens[index + 1].unspaced
            if !joinsNext { out.append(boundary) }
            index += 1
        }
        return out
    }

    private static func isSingle(_ token: Token) -> Bool { !token.unspaced && token.letters == 1 }
}
