import Foundation

/// What each character of the Basic Multilingual Plane becomes before matching, computed once per process:
/// NFKC (full and half width, ligatures), lower case, traditional to simplified Chinese, the UTS #39
/// confusable skeleton (look-alike letters), without accents; and how it separates words.
struct FoldingTable: Sendable {
    enum Kind: UInt8 {
        /// Dropped without a trace: zero-width and other format characters, combining marks, controls.
        case ignorable = 0
        /// Punctuation and symbols: they separate words as white space does (`casino-royale` is two words;
        /// single letters split by them still join: `s.p.a.m` is `spam`).
        case joiner
        /// White space: ends a word in scripts written with spaces.
        case space
        /// A letter or digit of a script written with spaces (Latin, Cyrillic, Greek, Arabic, Hangul, ...).
        case letter
        /// A letter of a script written without spaces (Han, kana, Thai, Lao, Khmer, Myanmar): list words
        /// match anywhere in such text.
        case unspacedLetter
    }

    /// Kind per BMP scalar.
    let kinds: [Kind]
    /// Folded form per BMP scalar: the scalar itself when `Self.multiple` is clear, else an index into `expansions`.
    let folded: [UInt32]
    let expansions: [[UInt32]]
    /// Whether ICU's variant data was available (traditional/simplified and confusables).
    let variantsLoaded: Bool

    static let multiple: UInt32 = 1 << 31
    static let shared = FoldingTable()

    private init() {
        let variants = UnicodeVariants()
        variantsLoaded = variants.isComplete
        var kinds = [Kind](repeating: .ignorable, count: 0x10000)
        var folded = [UInt32](repeating: 0, count: 0x10000)
        var expansions: [[UInt32]] = []
        for value in UInt32(0)..<0x10000 {
            guard let scalar = Unicode.Scalar(value) else { continue }  // surrogates
            var kind = Self.kind(of: scalar)
            if kind == .letter || kind == .unspacedLetter {
                let mapped = Self.fold(scalar, kind: kind, variants: variants)
                if mapped.isEmpty {
                    kind = .ignorable
                } else if mapped.count == 1 {
                    folded[Int(value)] = mapped[0]
                } else {
                    folded[Int(value)] = Self.multiple | UInt32(expansions.count)
                    expansions.append(mapped)
                }
            }
            kinds[Int(value)] = kind
        }
        self.kinds = kinds
        self.folded = folded
        self.expansions = expansions
    }

    /// Outside the BMP (rare in alerts: historic scripts, CJK extensions B+, emoji): kind by category,
    /// lower case only.
    static func kind(of scalar: Unicode.Scalar) -> Kind {
        let properties = scalar.properties
        if properties.isWhitespace { return .space }
        switch properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
             .decimalNumber, .letterNumber, .otherNumber, .spacingMark:
            return isUnspaced(scalar.value) ? .unspacedLetter : .letter
        case .format, .nonspacingMark, .enclosingMark, .control, .surrogate, .privateUse, .unassigned:
            return .ignorable
        default:
            return .joiner
        }
    }

    /// Scripts written without spaces between words, by block.
    static func isUnspaced(_ value: UInt32) -> Bool {
        switch value {
        case 0x0E00...0x0EFF,  // Thai, Lao
             0x1000...0x109F,  // Myanmar
             0x1780...0x17FF,  // Khmer
             0x2E80...0x2FDF,  // CJK radicals, Kangxi radicals
             0x3005...0x3007, 0x3021...0x3029, 0x3038...0x303B,  // ideographic iteration marks and numbers
             0x3040...0x31FF,  // Hiragana, Katakana, Bopomofo, Katakana extensions
             0x3400...0x4DBF,  // CJK extension A
             0x4E00...0x9FFF,  // CJK unified ideographs
             0xF900...0xFAFF,  // CJK compatibility ideographs
             0xFF66...0xFF9D,  // half-width Katakana
             0x20000...0x3FFFF:  // CJK extensions B and later
            return true
        default:
            return false
        }
    }

    private static func fold(_ scalar: Unicode.Scalar, kind: Kind, variants: UnicodeVariants) -> [UInt32] {
        var text = String(Character(scalar)).precomposedStringWithCompatibilityMapping.lowercased()
        if kind == .unspacedLetter { text = variants.simplified(text) }
        text = variants.skeleton(text).lowercased()
        // The skeleton is decomposed: accents become combining marks, which are dropped like any ignorable.
        return text.unicodeScalars.compactMap { mapped in
            switch Self.kind(of: mapped) {
            case .letter, .unspacedLetter: return mapped.value
            default: return nil
            }
        }
    }

    /// Folding outside the BMP: lower case only.
    static func foldOutsideBMP(_ scalar: Unicode.Scalar) -> [UInt32] {
        scalar.properties.lowercaseMapping.unicodeScalars.map(\.value)
    }
}
