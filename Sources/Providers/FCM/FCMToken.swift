/// FCM registration tokens (docs/message-format.md): 1..4,096 bytes of `A-Z a-z 0-9 _ - : .`, sent exactly as the
/// producer wrote them (no case folding, no decoding). Such a token needs no escaping inside a JSON string,
/// which lets `FCMRequestBody` copy it into the body as it is.
public enum FCMToken {
    public static let maxBytes = 4096

    public static func isValid(_ token: String) -> Bool {
        let utf8 = token.utf8
        guard utf8.count >= 1, utf8.count <= maxBytes else { return false }
        // The string's contiguous bytes: iterating its UTF-8 view byte by byte costs several times more.
        return utf8.withContiguousStorageIfAvailable { $0.allSatisfy(isTokenByte) } ?? utf8.allSatisfy(isTokenByte)
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
