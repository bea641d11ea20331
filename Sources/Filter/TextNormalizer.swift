import Foundation

/// Folds text to the form the matcher compares: NFKC (full-width and half-width forms become their
/// ordinary forms, ligatures split), lower case, and nothing but letters and digits, so that spaces,
/// punctuation, symbols and zero-width characters inserted between letters do not hide a word.
public enum TextNormalizer {
    public static func fold(_ text: String) -> [Unicode.Scalar] {
        let compatible = text.precomposedStringWithCompatibilityMapping
        var out: [Unicode.Scalar] = []
        out.reserveCapacity(compatible.unicodeScalars.count)
        for scalar in compatible.unicodeScalars {
            if scalar.value < 0x80 {
                // ASCII fast path: letters lower-cased, digits kept, everything else dropped.
                let v = scalar.value
                if v >= 0x41 && v <= 0x5A { out.append(Unicode.Scalar(v + 0x20)!) }
                else if (v >= 0x61 && v <= 0x7A) || (v >= 0x30 && v <= 0x39) { out.append(scalar) }
                continue
            }
            switch scalar.properties.generalCategory {
            case .uppercaseLetter, .titlecaseLetter:
                out.append(contentsOf: scalar.properties.lowercaseMapping.unicodeScalars)
            case .lowercaseLetter, .otherLetter, .modifierLetter, .decimalNumber, .letterNumber, .otherNumber,
                 .spacingMark:
                out.append(scalar)
            default:
                // Separators, punctuation, symbols, controls, format (zero-width) and combining marks.
                continue
            }
        }
        return out
    }
}
