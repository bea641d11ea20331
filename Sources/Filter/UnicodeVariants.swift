import CICU

/// ICU's variant data, the thin wrapper around its C API: traditional-to-simplified Chinese (ICU's
/// `Traditional-Simplified` transform, from the Unihan database) and look-alike letters (the confusable
/// skeleton of UTS #39, from Unicode's confusables.txt). Used once per process to build `FoldingTable`.
final class UnicodeVariants {
    private let simplifier: UnsafeMutableRawPointer?
    private let checker: UnsafeMutableRawPointer?

    init() {
        simplifier = icuv_open_simplifier()
        checker = icuv_open_checker()
    }

    deinit {
        if let simplifier { icuv_close_simplifier(simplifier) }
        if let checker { icuv_close_checker(checker) }
    }

    /// Whether ICU provided both mappings (without them the filter folds width, case and accents only).
    var isComplete: Bool { simplifier != nil && checker != nil }

    /// The simplified form of a text (unchanged where it has none).
    func simplified(_ text: String) -> String {
        guard let simplifier else { return text }
        let input = Array(text.utf16)
        let capacity = input.count * 4 + 16
        var buffer = input + [UInt16](repeating: 0, count: capacity - input.count)
        var length = Int32(input.count)
        let status = buffer.withUnsafeMutableBufferPointer { icuv_simplify(simplifier, $0.baseAddress, &length, Int32(capacity)) }
        guard status == 0, length >= 0, Int(length) <= capacity else { return text }
        return String(decoding: buffer.prefix(Int(length)), as: UTF16.self)
    }

    /// The UTS #39 skeleton: look-alikes (Cyrillic а, Greek ο, digit 0, ...) map to one prototype.
    func skeleton(_ text: String) -> String {
        guard let checker else { return text }
        let input = Array(text.utf16)
        var output = [UInt16](repeating: 0, count: input.count * 8 + 16)
        let capacity = Int32(output.count)
        let length = input.withUnsafeBufferPointer { source in
            output.withUnsafeMutableBufferPointer { icuv_skeleton(checker, source.baseAddress, Int32(source.count), $0.baseAddress, capacity) }
        }
        guard length >= 0, Int(length) <= output.count else { return text }
        return String(decoding: output.prefix(Int(length)), as: UTF16.self)
    }
}
