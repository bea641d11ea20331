/// `notify_id` from a message's `collapse_id`: a newer notification with the same id replaces the older one on
/// the device, as `apns-collapse-id` does. MiPush takes 0...2147483647, so the id is a 31-bit hash of the
/// collapse id's UTF-8 bytes: FNV-1a, 32 bits (offset basis 2166136261, prime 16777619), its top bit cleared.
///
/// Stable by definition, across processes, machines and versions (Swift's `hashValue` is seeded per process and
/// would give the same collapse id a different `notify_id` after a restart, so nothing would be replaced). Two
/// collapse ids may share an id (one in 2^31 for any pair), and one would then replace the other's notification:
/// the price of a number where the producer gave a string.
enum XiaomiNotifyID {
    static func of(_ collapseID: String) -> Int {
        var hash: UInt32 = 2_166_136_261
        for byte in collapseID.utf8 {
            hash ^= UInt32(byte)
            hash = hash &* 16_777_619
        }
        return Int(hash & 0x7FFF_FFFF)
    }
}
