/// When a vendor's day rolls over (a block's `quota_reset`): an app whose daily quota is spent waits until then.
/// The vendors do not all say when their day begins; Beijing midnight (`00:00+08:00`) is the usual reading, so the
/// time is configuration: if it is wrong the app waits too long or retries too early, and each early try is one
/// more over-quota answer and one more wait, never a message lost.
///
/// Pure arithmetic on UNIX milliseconds, checked: no input traps.
public struct QuotaDay: Sendable, Equatable {
    public static let millisPerDay: Int64 = 86_400_000
    /// Beijing midnight, 16:00 UTC.
    public static let beijingMidnight = QuotaDay(resetMillisUTC: 16 * 3_600_000)

    /// Milliseconds after 00:00 UTC at which a vendor's day begins, in 0..<`millisPerDay`.
    public let resetMillisUTC: Int64

    /// Any value, taken modulo a day.
    public init(resetMillisUTC: Int64) {
        let remainder = resetMillisUTC % Self.millisPerDay
        self.resetMillisUTC = remainder < 0 ? remainder + Self.millisPerDay : remainder
    }

    /// `HH:MM+HH:MM` or `HH:MM-HH:MM`: the local time the day begins and that place's offset from UTC (up to
    /// 14 hours), as `00:00+08:00`. Nothing else is accepted, so a typo is a startup error rather than a day that
    /// rolls over at a time nobody meant.
    public init(parsing text: String) throws(QuotaDayFormatError) {
        let bytes = Array(text.utf8)
        func number(_ at: Int) -> Int? {
            let (tens, ones) = (bytes[at], bytes[at + 1])
            guard (48...57).contains(tens), (48...57).contains(ones) else { return nil }
            return Int(tens - 48) * 10 + Int(ones - 48)
        }
        guard bytes.count == 11, bytes[2] == UInt8(ascii: ":"), bytes[8] == UInt8(ascii: ":"),
              bytes[5] == UInt8(ascii: "+") || bytes[5] == UInt8(ascii: "-"),
              let hour = number(0), let minute = number(3), let offsetHours = number(6), let offsetMinutes = number(9)
        else {
            throw QuotaDayFormatError("\"\(text.prefix(40))\" is not HH:MM+HH:MM (e.g. 00:00+08:00, Beijing midnight)")
        }
        guard hour < 24, minute < 60 else { throw QuotaDayFormatError("\"\(text)\": the time must be 00:00 to 23:59") }
        guard offsetMinutes < 60, offsetHours * 60 + offsetMinutes <= 14 * 60 else {
            throw QuotaDayFormatError("\"\(text)\": the UTC offset must be -14:00 to +14:00")
        }
        let local = Int64(hour * 60 + minute) * 60_000
        let offset = Int64(offsetHours * 60 + offsetMinutes) * 60_000 * (bytes[5] == UInt8(ascii: "+") ? 1 : -1)
        self.init(resetMillisUTC: local - offset)
    }

    /// The first rollover strictly after `wallMillis` (UNIX milliseconds): at the rollover itself the new day has
    /// begun, and the next one is a day away. `Int64.max` where the answer does not fit (no real clock gets there).
    public func nextRollover(afterWallMillis wallMillis: Int64) -> Int64 {
        let (sinceReset, below) = wallMillis.subtractingReportingOverflow(resetMillisUTC)
        // Within a day of the clock's lower end: a day later is computed without overflow, and a day earlier
        // is the answer.
        if below { return nextRollover(afterWallMillis: wallMillis + Self.millisPerDay) - Self.millisPerDay }
        // Floor division: a time before 1970 still falls in the day that began before it.
        var day = sinceReset / Self.millisPerDay
        if sinceReset % Self.millisPerDay < 0 { day -= 1 }
        let (start, overflow) = (day + 1).multipliedReportingOverflow(by: Self.millisPerDay)
        let (next, over) = start.addingReportingOverflow(resetMillisUTC)
        return overflow || over ? .max : next
    }
}

/// A `quota_reset` that is not `HH:MM+HH:MM`: one sentence naming the value.
public struct QuotaDayFormatError: Error, Equatable, CustomStringConvertible {
    public let description: String

    public init(_ description: String) { self.description = description }
}
