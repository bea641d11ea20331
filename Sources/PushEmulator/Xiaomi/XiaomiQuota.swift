import Foundation
import NIOConcurrencyHelpers

/// Each Xiaomi app's daily message quota (one message per regId), counted per Xiaomi day: a day begins at
/// `quota_reset` (default 00:00+08:00, Beijing midnight, unverified) on the side's `VendorClock`, so a test moves
/// to the next day at once. A send that would go over the quota is refused whole (10034) and counts nothing.
final class XiaomiQuota: Sendable {
    private struct Used {
        var day: Int64
        var messages: Int
    }

    /// Seconds after 00:00 UTC at which the day rolls over.
    let resetSecondsUTC: Int
    private let limits: NIOLockedValueBox<[String: Int]>
    private let used = NIOLockedValueBox<[String: Used]>([:])

    init(reset: String, apps: [EmulatorConfiguration.XiaomiApp]) throws {
        guard let seconds = Self.parse(reset) else {
            throw EmulatorError.configuration("Xiaomi quota reset '\(reset)' is not HH:MM+HH:MM (e.g. 00:00+08:00)")
        }
        resetSecondsUTC = seconds
        var limits: [String: Int] = [:]
        for app in apps { if let quota = app.dailyQuota { limits[app.appSecret] = quota } }
        self.limits = NIOLockedValueBox(limits)
    }

    /// `HH:MM±HH:MM` -> seconds after 00:00 UTC (`00:00+08:00` -> 16:00 UTC = 57600).
    static func parse(_ text: String) -> Int? {
        guard text.count == 11, let sign = text.dropFirst(5).first, sign == "+" || sign == "-" else { return nil }
        let local = text.prefix(5).split(separator: ":"), offset = text.suffix(5).split(separator: ":")
        guard local.count == 2, offset.count == 2, let h = Int(local[0]), let m = Int(local[1]), let oh = Int(offset[0]),
              let om = Int(offset[1]), (0..<24).contains(h), (0..<60).contains(m), (0...14).contains(oh), (0..<60).contains(om)
        else { return nil }
        let offsetSeconds = (oh * 3600 + om * 60) * (sign == "+" ? 1 : -1)
        return ((h * 3600 + m * 60 - offsetSeconds) % 86_400 + 86_400) % 86_400
    }

    /// The Xiaomi day `time` falls in.
    func day(at time: Double) -> Int64 { Int64(((time - Double(resetSecondsUTC)) / 86_400).rounded(.down)) }

    /// When the day after the one of `time` begins.
    func nextReset(after time: Double) -> Double { Double(day(at: time) + 1) * 86_400 + Double(resetSecondsUTC) }

    /// Counts `messages` for the app (by its secret) unless they would go over its quota.
    func spend(app: String, messages: Int, at time: Double) -> Bool {
        guard let limit = limits.withLockedValue({ $0[app] }) else { return true }
        let today = day(at: time)
        return used.withLockedValue { used in
            var entry = used[app].flatMap { $0.day == today ? $0 : nil } ?? Used(day: today, messages: 0)
            guard entry.messages + messages <= limit else { return false }
            entry.messages += messages
            used[app] = entry
            return true
        }
    }

    /// Messages the app sent today.
    func spent(app: String, at time: Double) -> Int {
        let today = day(at: time)
        return used.withLockedValue { $0[app].flatMap { $0.day == today ? $0.messages : nil } ?? 0 }
    }

    func setLimit(app: String, quota: Int?) { limits.withLockedValue { $0[app] = quota } }
}
