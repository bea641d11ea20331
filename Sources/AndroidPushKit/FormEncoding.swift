/// `application/x-www-form-urlencoded` in UTF-8, as the vendors that take forms read them.
///
/// Every byte but RFC 3986's unreserved ones (`A-Z a-z 0-9 - . _ ~`) is percent-encoded, upper-case hex, and a
/// space is `%20`, not `+`. A form decoder (the WHATWG rules, Java's `URLDecoder`, Go's `ParseQuery`) reads
/// `%20` as a space just as it reads `+`, while a server that only percent-decodes (RFC 3986) would keep a `+`
/// as a plus: `%20` means a space under both readings, and a literal plus is always `%2B`. A field a vendor's
/// documentation says to URL-encode (a message payload) is encoded once here, as the form's own encoding, as the
/// open-source clients do; encoding it twice would hand the app percent signs.
public enum FormEncoding {
    /// Appends `name=value` (both encoded), after a `&` unless `out` is empty.
    public static func appendField(_ name: String, _ value: String, to out: inout [UInt8]) {
        if !out.isEmpty { out.append(UInt8(ascii: "&")) }
        append(name, to: &out)
        out.append(UInt8(ascii: "="))
        append(value, to: &out)
    }

    /// Appends `text` encoded.
    public static func append(_ text: String, to out: inout [UInt8]) { append(bytes: text.utf8, to: &out) }

    /// Appends UTF-8 `bytes` encoded (a JSON value made as bytes, without a String made of it).
    public static func append(bytes: some Sequence<UInt8>, to out: inout [UInt8]) {
        for byte in bytes {
            if isUnreserved(byte) {
                out.append(byte)
            } else {
                out.append(UInt8(ascii: "%"))
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0x0F)])
            }
        }
    }

    /// The encoded length of `text`, for reserving a body's capacity.
    public static func length(of text: String) -> Int {
        text.utf8.reduce(0) { $0 + (isUnreserved($1) ? 1 : 3) }
    }

    @inline(__always)
    public static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    private static let hex = Array("0123456789ABCDEF".utf8)
}
