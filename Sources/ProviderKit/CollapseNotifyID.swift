/// A message's `collapse_id` as the integer China's Android vendors take for it (a `notify_id` or `notifyId`): a
/// newer notification with the same id replaces the older one on the device, as Apple's collapse-id header does, but
/// the vendors take a number where producers give text.
///
/// FNV-1a (32-bit: offset basis 2166136261, prime 16777619) over the collapse id's UTF-8 bytes, with the top bit
/// cleared: 0 to 2,147,483,647, never negative (a vendor may read -1 as "assign one yourself"). Stable across
/// processes, machines and releases (unlike Swift's `hashValue`, which is seeded per process), so two workers, or
/// one before and after a restart, give the same collapse id the same number. Two different collapse ids meet on
/// one number once in about 2^31 pairs, and then only on one device of one app.
public enum CollapseNotifyID {
    public static func of(_ collapseID: String) -> Int {
        var hash: UInt32 = 2_166_136_261
        for byte in collapseID.utf8 {
            hash ^= UInt32(byte)
            hash = hash &* 16_777_619
        }
        return Int(hash & 0x7FFF_FFFF)
    }
}
