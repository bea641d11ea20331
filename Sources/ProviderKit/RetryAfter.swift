/// A `Retry-After` header as a push service sends it with a 503 or 429: delay-seconds (an HTTP date is not what
/// these services send, and is ignored), capped at an hour: no answer holds requests longer.
public enum RetryAfter {
    public static let longestSeconds: Int64 = 3600

    /// The wait it asks for in milliseconds, nil for none or anything else.
    public static func millis(_ value: String?) -> Int64? {
        guard let value else { return nil }
        let trimmed = value.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed()
        guard let seconds = Int64(String(trimmed)), seconds >= 0 else { return nil }
        return min(seconds, longestSeconds) * 1000
    }
}
