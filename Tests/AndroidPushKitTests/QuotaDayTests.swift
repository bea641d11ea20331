import AndroidPushKit
import XCTest

/// `quota_reset` read and the next vendor day computed: around midnight, with offsets either side of UTC, at the
/// ends of the clock's range, and the text it refuses.
final class QuotaDayTests: XCTestCase {
    /// 2026-01-01 00:00:00 UTC.
    static let newYearUTC: Int64 = 1_767_225_600_000
    static let hour: Int64 = 3_600_000

    func testParsing() throws {
        XCTAssertEqual(try QuotaDay(parsing: "00:00+08:00").resetMillisUTC, 16 * Self.hour, "Beijing midnight is 16:00 UTC")
        XCTAssertEqual(try QuotaDay(parsing: "00:00+08:00"), .beijingMidnight)
        XCTAssertEqual(try QuotaDay(parsing: "08:30-05:00").resetMillisUTC, 13 * Self.hour + Self.hour / 2)
        XCTAssertEqual(try QuotaDay(parsing: "00:00+00:00").resetMillisUTC, 0)
        XCTAssertEqual(try QuotaDay(parsing: "23:59+14:00").resetMillisUTC, 9 * Self.hour + 59 * 60_000)
        XCTAssertEqual(try QuotaDay(parsing: "00:00-14:00").resetMillisUTC, 14 * Self.hour)
        XCTAssertEqual(try QuotaDay(parsing: "05:45+05:45").resetMillisUTC, 0, "Nepal's offset")
        XCTAssertEqual(QuotaDay(resetMillisUTC: -Self.hour).resetMillisUTC, 23 * Self.hour, "taken modulo a day")
    }

    func testTextItRefuses() {
        for text in ["", "midnight", "0:00+08:00", "00:00 08:00", "00:00+8:00", "24:00+08:00", "00:60+08:00", "00:00+15:00",
                     "00:00+14:01", "00:00+08:60", "00:00+08:00 ", " 00:00+08:00", "00:00Z", "０0:00+08:00", "00:00+08:0x"] {
            XCTAssertThrowsError(try QuotaDay(parsing: text), "\"\(text)\"") { error in
                XCTAssertTrue("\(error)".contains("\""), "the error names the value: \(error)")
            }
        }
    }

    func testTheNextRolloverAroundBeijingMidnight() {
        let day = QuotaDay.beijingMidnight
        let midnight = Self.newYearUTC + 16 * Self.hour  // 2026-01-02 00:00 in Beijing
        XCTAssertEqual(day.nextRollover(afterWallMillis: midnight - 1), midnight)
        XCTAssertEqual(day.nextRollover(afterWallMillis: midnight - 23 * Self.hour), midnight)
        XCTAssertEqual(day.nextRollover(afterWallMillis: midnight), midnight + QuotaDay.millisPerDay, "at the rollover the new day has begun")
        XCTAssertEqual(day.nextRollover(afterWallMillis: midnight + 1), midnight + QuotaDay.millisPerDay)
        // UTC midnight is 08:00 in Beijing: the next Beijing midnight is 16 hours on.
        XCTAssertEqual(day.nextRollover(afterWallMillis: Self.newYearUTC), midnight)
        let newYork = QuotaDay(resetMillisUTC: 5 * Self.hour)  // "00:00-05:00"
        XCTAssertEqual(newYork.nextRollover(afterWallMillis: Self.newYearUTC), Self.newYearUTC + 5 * Self.hour)
        XCTAssertEqual(newYork.nextRollover(afterWallMillis: Self.newYearUTC + 6 * Self.hour), Self.newYearUTC + 29 * Self.hour)
    }

    func testTheEndsOfTheClockNeverTrap() {
        let day = QuotaDay.beijingMidnight
        XCTAssertEqual(day.nextRollover(afterWallMillis: 0), 16 * Self.hour)
        XCTAssertEqual(day.nextRollover(afterWallMillis: -1), 16 * Self.hour)
        XCTAssertEqual(day.nextRollover(afterWallMillis: -9 * Self.hour), -8 * Self.hour, "23:00 on 1969-12-31 in Beijing")
        XCTAssertEqual(day.nextRollover(afterWallMillis: -8 * Self.hour - 1), -8 * Self.hour)
        XCTAssertEqual(day.nextRollover(afterWallMillis: .max), .max)
        XCTAssertLessThan(day.nextRollover(afterWallMillis: .min), 0)
        let walls: [Int64] = [.min, .min + 1, -QuotaDay.millisPerDay, 1, .max - 1]
        for wall in walls {
            let next = day.nextRollover(afterWallMillis: wall)
            XCTAssertTrue(next > wall || next == .max, "\(wall) -> \(next)")
        }
    }
}
