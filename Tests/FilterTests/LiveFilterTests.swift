import Filter
import Foundation
import PushCore
import XCTest

final class LiveFilterTests: XCTestCase {
    func testAChangedFileIsSwappedInAndABrokenOneKeepsThePreviousLists() throws {
        let settings = try wordsSettings(["spam"])
        let live = try LiveFilter(settings: settings)
        XCTAssertEqual(live.reloadIfChanged(), .unchanged)
        XCTAssertEqual(live.current.firstBlocked(in: "spam"), "spam")

        try "eggs\nham".write(toFile: settings.wordsFile, atomically: true, encoding: .utf8)
        XCTAssertEqual(live.reloadIfChanged(), .reloaded(words: 2, allowed: 0))
        XCTAssertNil(live.current.firstBlocked(in: "spam"))
        XCTAssertEqual(live.current.firstBlocked(in: "green eggs"), "eggs")

        // Not UTF-8: the previous lists stay, the failure names the file, and it is reported once.
        try Data([0x66, 0x6F, 0xFF, 0xFE]).write(to: URL(fileURLWithPath: settings.wordsFile))
        guard case .failed(let reason) = live.reloadIfChanged() else { return XCTFail("a broken file must fail") }
        XCTAssertTrue(reason.contains("filter.words_file") && reason.contains(settings.wordsFile), reason)
        XCTAssertEqual(live.current.firstBlocked(in: "green eggs"), "eggs")
        XCTAssertEqual(live.reloadIfChanged(), .unchanged)

        // A deleted file is a failure too; forcing (SIGHUP) tries again even when nothing looks changed.
        try FileManager.default.removeItem(atPath: settings.wordsFile)
        guard case .failed = live.reloadIfChanged() else { return XCTFail("a missing file must fail") }
        try "spam".write(toFile: settings.wordsFile, atomically: true, encoding: .utf8)
        XCTAssertEqual(live.reloadIfChanged(force: true), .reloaded(words: 1, allowed: 0))
        XCTAssertEqual(live.current.firstBlocked(in: "spam"), "spam")
    }

    func testTheAllowFileIsWatchedToo() throws {
        let settings = try wordsSettings(["*ass*"], allow: ["grass"])
        let live = try LiveFilter(settings: settings)
        XCTAssertEqual(live.current.firstBlocked(in: "classic"), "*ass*")
        try "grass\nclassic".write(toFile: settings.allowFile, atomically: true, encoding: .utf8)
        XCTAssertEqual(live.reloadIfChanged(), .reloaded(words: 1, allowed: 2))
        XCTAssertNil(live.current.firstBlocked(in: "classic"))
    }
}
