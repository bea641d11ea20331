/// Lets one log line of a kind through per interval: a server that refuses or goes away on every connection
/// must not fill the log with the same line every few hundred milliseconds. The lines held back in between
/// are counted, and the next line let through says how many there were (each is still logged at debug).
struct RepeatedLineLimiter {
    let intervalNanos: UInt64
    private var lastAt: UInt64?
    private var held = 0

    init(intervalMillis: Int) {
        intervalNanos = millisToNanos(intervalMillis)
    }

    /// nil: hold this line back (log it at debug only); otherwise the number of lines held back since the last
    /// one let through.
    mutating func admit(now: UInt64) -> Int? {
        if let lastAt, now < lastAt &+ intervalNanos {
            held += 1
            return nil
        }
        lastAt = now
        defer { held = 0 }
        return held
    }
}
