/// What a vendor side takes for a token at all (docs/emulator.md): 1..1,024 bytes of printable ASCII without spaces or
/// commas; anything else is malformed, whatever its prefix.
enum VendorToken {
    static func isWellFormed(_ token: String) -> Bool {
        !token.isEmpty && token.utf8.count <= 1024 && token.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7f && $0 != 0x2c }
    }
}
