/// A new `apns-id`: a random (version 4) UUID in lowercase, as APNs answers with.
///
/// Not Foundation's `UUID()`: on Linux it opens, reads and closes /dev/urandom for every one, which was about 8% of
/// the emulator's event loop at 50 ms and 20,000 answers/s (perf: openat, close and UUID.init); this draws its 16
/// bytes from `SystemRandomNumberGenerator` (getrandom(2), no file).
enum APNsID {
    private static let hexDigits = Array("0123456789abcdef".utf8)

    static func random() -> String {
        var generator = SystemRandomNumberGenerator()
        // Version 4 in the high half's 13th hex digit, the RFC 4122 variant (10xx) in the low half's first bits.
        let high = (generator.next() as UInt64) & 0xffff_ffff_ffff_0fff | 0x0000_0000_0000_4000
        let low = (generator.next() as UInt64) & 0x3fff_ffff_ffff_ffff | 0x8000_0000_0000_0000
        var text: [UInt8] = []
        text.reserveCapacity(36)
        for (index, half) in [high, low].enumerated() {
            for nibble in 0..<16 {
                let position = index * 16 + nibble
                if position == 8 || position == 12 || position == 16 || position == 20 { text.append(UInt8(ascii: "-")) }
                text.append(hexDigits[Int(truncatingIfNeeded: (half >> UInt64(60 - 4 * nibble)) & 0xf)])
            }
        }
        return String(decoding: text, as: UTF8.self)
    }
}
