/// The Redis Cluster hash slot of a key, computed as the cluster does (CRC16/XMODEM of the key, or of its
/// hash tag, modulo 16384), so a connection knows which node to ask for before any redirection.
public enum ClusterSlot {
    public static let count = 16384

    /// The slot of `key`: when it holds `{tag}` with a non-empty tag (the first `{` and the first `}` after
    /// it), only the tag is hashed, which is what puts every key of a shard in one slot.
    public static func of(key: String) -> Int {
        of(bytes: Array(key.utf8))
    }

    public static func of(bytes key: [UInt8]) -> Int {
        var hashed = key[...]
        if let open = key.firstIndex(of: UInt8(ascii: "{")),
           let close = key[(open + 1)...].firstIndex(of: UInt8(ascii: "}")), close > open + 1 {
            hashed = key[(open + 1)..<close]
        }
        return Int(crc16(hashed)) % count
    }

    /// CRC16/XMODEM (polynomial 0x1021, initial value 0), bit by bit: keys are short and hashed once per
    /// connection, not per command.
    static func crc16(_ bytes: ArraySlice<UInt8>) -> UInt16 {
        var crc: UInt16 = 0
        for byte in bytes {
            crc ^= UInt16(byte) << 8
            for _ in 0..<8 {
                crc = crc & 0x8000 != 0 ? (crc << 1) ^ 0x1021 : crc << 1
            }
        }
        return crc
    }
}
