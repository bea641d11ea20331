/// A message's `collapse_id` as the integer China's Android vendors take for it (a `notify_id` or `notifyId`): a
/// newer notification with the same id replaces the older one on the device, as Apple's collapse-id header does, but
/// the vendors take a number where producers give text. Without a collapse id, the message's own `id` is hashed the
/// same way (`of(collapseID:messageID:)`): a batch sent again (a timeout after it was written, a worker that died
/// with it on the wire) then replaces what the phone already shows, and distinct messages stack.
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

    /// The notification id of a message: its collapse id's, or else its id's.
    public static func of(collapseID: String?, messageID: String) -> Int {
        of(collapseID.flatMap { $0.isEmpty ? nil : $0 } ?? messageID)
    }
}

/// A key derived from a message's `id` for a vendor that de-duplicates by one (a job key, a request id): the same on
/// every retry and from every worker, so a batch sent twice is shown once. 16 lower-case hex digits of FNV-1a 64
/// over the id's UTF-8 bytes (within the 20 characters of `[0-9A-Za-z_-]` the strictest vendor allows).
public enum MessageKey {
    public static func of(messageID: String) -> String {
        var hash: UInt64 = 14_695_981_039_346_656_037
        for byte in messageID.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 1_099_511_628_211
        }
        let digits = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
