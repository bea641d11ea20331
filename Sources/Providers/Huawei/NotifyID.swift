/// A message's `collapse_id` as Huawei's `notify_id` (v1) / `notifyId` (v3): a notification with the same id replaces
/// the one on the device, as `apns-collapse-id` does, but Huawei takes an integer where producers give text.
///
/// The id is FNV-1a (32-bit: offset basis 2166136261, prime 16777619) over the collapse id's UTF-8 bytes, with
/// the top bit cleared: 0 to 2,147,483,647, never negative (Huawei reads -1 as "assign one yourself"). Stable
/// across processes, machines and releases (unlike Swift's `hashValue`, which is seeded per process), so two
/// workers, or one before and after a restart, give the same collapse id the same number. Two different collapse
/// ids meet on one number once in about 2^31 pairs, and then only on one device of one app.
enum NotifyID {
    static func of(_ collapseID: String) -> Int64 {
        var hash: UInt32 = 2_166_136_261
        for byte in collapseID.utf8 {
            hash ^= UInt32(byte)
            hash = hash &* 16_777_619
        }
        return Int64(hash & 0x7FFF_FFFF)
    }
}
