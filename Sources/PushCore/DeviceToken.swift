/// Device token normalisation (docs/message-format.md): hex of either case, 16..200 even-length digits, or
/// Base64 of 32 bytes (seed 003). Everything is sent as lowercase hex.
public enum DeviceToken {
    public static func normalize(_ token: String) -> String? {
        let count = token.utf8.count
        let hexLength = count >= 16 && count <= 200 && count % 2 == 0
        // Nearly every token arrives as Apple's devices give them: lowercase hex, already normalized, kept as it is.
        if hexLength, token.utf8.withContiguousStorageIfAvailable(isLowercaseHex) ?? token.utf8.allSatisfy(isLowercaseHexDigit) {
            return token
        }
        let utf8 = Array(token.utf8)
        if hexLength, utf8.allSatisfy(isHexDigit) {
            return String(decoding: utf8.map(lowercased), as: UTF8.self)
        }
        if let bytes = decodeBase64(utf8), bytes.count == 32 {
            return hex(bytes)
        }
        return nil
    }

    public static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Whether every byte is a lowercase hex digit, eight bytes at a time: a byte loop was a tenth of parsing
    /// a one-token message. For each byte (all below 0x80, checked first) adding `0x80 - lo` sets its high bit
    /// exactly when it is at least `lo`, and no sum carries into the next byte (0x7F + 0x50 < 0x100); so the
    /// high bits of `(w + (0x80 - lo)) & ~(w + (0x80 - hi - 1))` mark the bytes in `lo...hi`.
    static func isLowercaseHex(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let high: UInt64 = 0x8080_8080_8080_8080
        func marks(_ word: UInt64, _ lo: UInt8, _ hi: UInt8) -> UInt64 {
            (word &+ ones &* UInt64(0x80 - lo)) & ~(word &+ ones &* UInt64(0x80 - hi - 1)) & high
        }
        let raw = UnsafeRawBufferPointer(bytes)
        let words = raw.count / 8
        for position in 0..<words {
            let word = raw.loadUnaligned(fromByteOffset: position * 8, as: UInt64.self)
            guard word & high == 0, marks(word, 0x30, 0x39) | marks(word, 0x61, 0x66) == high else { return false }
        }
        return bytes[(words * 8)...].allSatisfy(isLowercaseHexDigit)
    }

    /// Checked over the contiguous bytes of a native string above: iterating the UTF-8 view byte by byte cost
    /// more than the rest of the check.
    private static func isLowercaseHexDigit(_ c: UInt8) -> Bool { (c >= 48 && c <= 57) || (c >= 97 && c <= 102) }

    private static func isHexDigit(_ c: UInt8) -> Bool {
        (c >= 48 && c <= 57) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102)
    }

    private static func lowercased(_ c: UInt8) -> UInt8 { (c >= 65 && c <= 70) ? c + 32 : c }

    /// Standard or URL-safe Base64, padded or not.
    static func decodeBase64(_ chars: [UInt8]) -> [UInt8]? {
        var body = chars
        while body.last == UInt8(ascii: "=") { body.removeLast() }
        guard !body.isEmpty, body.count % 4 != 1 else { return nil }
        var out: [UInt8] = []
        var buffer: UInt32 = 0
        var bits = 0
        for c in body {
            let value: UInt8
            switch c {
            case 65...90: value = c - 65
            case 97...122: value = c - 71
            case 48...57: value = c + 4
            case UInt8(ascii: "+"), UInt8(ascii: "-"): value = 62
            case UInt8(ascii: "/"), UInt8(ascii: "_"): value = 63
            default: return nil
            }
            buffer = (buffer << 6) | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8((buffer >> UInt32(bits)) & 0xff))
            }
        }
        return out
    }
}
