/// What one of China's Android vendors refuses whatever the token (docs/vendors.md), given by its provider module
/// when it registers (`PushProvider.register`): the parser checks it, so such a message is a dead letter at once
/// (`Malformed: ...`) instead of a request every token of which fails.
public struct AndroidVendorRules: Sendable, Equatable {
    /// The payload's largest size in bytes, tokens not counted (4,096 for the vendors that publish one).
    public var maxPayloadBytes: Int
    /// The longest `notification.title` and `notification.body` in characters (a vendor that caps them: under 50 and 128); nil: no
    /// limit of the vendor's own.
    public var maxTitleCharacters: Int?
    public var maxBodyCharacters: Int?
    /// Tokens one request may carry (1,000 for the vendors that take lists).
    public var tokensPerRequest: Int
    /// How the vendor counts a character: a Java server counts UTF-16 code units (an emoji is two, a flag four), not
    /// what a reader sees as one.
    public var countsUTF16: Bool

    public init(maxPayloadBytes: Int = 4096, maxTitleCharacters: Int? = nil, maxBodyCharacters: Int? = nil,
                tokensPerRequest: Int = 1000, countsUTF16: Bool = false) {
        self.maxPayloadBytes = maxPayloadBytes
        self.maxTitleCharacters = maxTitleCharacters
        self.maxBodyCharacters = maxBodyCharacters
        self.tokensPerRequest = tokensPerRequest
        self.countsUTF16 = countsUTF16
    }

    /// `text`'s length as the vendor counts it.
    public func length(of text: String) -> Int { countsUTF16 ? text.utf16.count : text.count }
}

/// A token of China's Android vendors (docs/message-format.md): 1..1,024 bytes of printable ASCII without spaces or
/// commas (a comma would add targets to a vendor's comma-separated list), sent exactly as the producer wrote it.
public enum VendorToken {
    public static let maxBytes = 1024

    public static func isValid(_ token: String) -> Bool {
        let utf8 = token.utf8
        guard utf8.count >= 1, utf8.count <= maxBytes else { return false }
        return utf8.withContiguousStorageIfAvailable { $0.allSatisfy(isTokenByte) } ?? utf8.allSatisfy(isTokenByte)
    }

    /// Printable ASCII (0x21-0x7E) but the comma.
    static func isTokenByte(_ byte: UInt8) -> Bool { byte > 0x20 && byte < 0x7F && byte != UInt8(ascii: ",") }
}
