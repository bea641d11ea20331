/// FCM registration tokens (docs/message-format.md): 1..4,096 bytes of `A-Z a-z 0-9 _ - : .`, sent exactly as the
/// producer wrote them (no case folding, no decoding). Such a token needs no escaping inside a JSON string,
/// which lets `FCMRequestBody` copy it into the body as it is.
public enum FCMToken {
    public static let maxBytes = 4096

    public static func isValid(_ token: String) -> Bool {
        let utf8 = token.utf8
        guard utf8.count >= 1, utf8.count <= maxBytes else { return false }
        // The string's contiguous bytes: iterating its UTF-8 view byte by byte costs several times more.
        return utf8.withContiguousStorageIfAvailable(allTokenBytes) ?? utf8.allSatisfy(isTokenByte)
    }

    /// Every byte a token byte, tested by a bit mask without an early exit: a branch-free loop over a token of
    /// 150-odd bytes, where a test of ranges with a branch per byte cost several times more.
    private static func allTokenBytes(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var all: UInt64 = 1
        for byte in bytes { all &= tokenBit(byte) }
        return all != 0
    }

    /// 1 for `A-Z a-z 0-9 _ - : .`, else 0: bytes below 64 in one mask, 64 to 127 in another, none above.
    @inline(__always)
    private static func tokenBit(_ byte: UInt8) -> UInt64 {
        // Bits 45 '-', 46 '.', 48-57 '0'-'9', 58 ':'.
        let low: UInt64 = (1 << 45) | (1 << 46) | (0x7FF << 48)
        // Bits (byte - 64): 1-26 'A'-'Z', 31 '_', 33-58 'a'-'z'.
        let high: UInt64 = (0x3FF_FFFF << 1) | (1 << 31) | (0x3FF_FFFF << 33)
        let mask = byte < 64 ? low : (byte < 128 ? high : 0)
        return (mask >> UInt64(byte & 63)) & 1
    }

    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: ":"), UInt8(ascii: "."):
            return true
        default:
            return false
        }
    }
}
