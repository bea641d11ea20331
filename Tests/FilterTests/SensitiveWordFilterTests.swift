import APNsProvider
import Filter
import PushCore
import XCTest

final class SensitiveWordMatcherTests: XCTestCase {
    let matcher = SensitiveWordMatcher(words: ["spam", "法轮", "赌博", "Casino Royale", "ｆｏｏ"])

    func testPlainAndCaseInsensitive() {
        XCTAssertEqual(matcher.firstMatch(in: "buy SPAM now"), "spam")
        XCTAssertEqual(matcher.firstMatch(in: "Spam"), "spam")
        XCTAssertNil(matcher.firstMatch(in: "a perfectly fine message"))
    }

    func testChineseText() {
        XCTAssertEqual(matcher.firstMatch(in: "今天一起去赌博吧"), "赌博")
        XCTAssertNil(matcher.firstMatch(in: "今天一起去吃饭吧"))
    }

    func testFullWidthAndHalfWidthForms() {
        XCTAssertEqual(matcher.firstMatch(in: "ＳＰＡＭ!"), "spam", "full-width letters fold to ASCII")
        XCTAssertEqual(matcher.firstMatch(in: "foo"), "ｆｏｏ", "a full-width word in the list matches ASCII text")
    }

    func testCharactersInsertedBetweenLetters() {
        XCTAssertEqual(matcher.firstMatch(in: "s p a m"), "spam")
        XCTAssertEqual(matcher.firstMatch(in: "s.p-a_m"), "spam")
        XCTAssertEqual(matcher.firstMatch(in: "s\u{200B}p\u{200C}a\u{200D}m"), "spam", "zero-width characters")
        XCTAssertEqual(matcher.firstMatch(in: "赌 · 博"), "赌博")
        XCTAssertEqual(matcher.firstMatch(in: "casino-royale"), "Casino Royale")
    }

    func testOverlappingWordsNeedFailureLinks() {
        let overlapping = SensitiveWordMatcher(words: ["*abcd*", "*bce*"])
        XCTAssertEqual(overlapping.firstMatch(in: "xabce"), "*bce*")
        XCTAssertNil(overlapping.firstMatch(in: "xabcx"))
    }

    func testLargeListsBuildAndMatch() {
        let words = (0..<20_000).map { "word\($0)x" }
        let big = SensitiveWordMatcher(words: words)
        XCTAssertEqual(big.firstMatch(in: String(repeating: "filler ", count: 1000) + "WORD19999X"), "word19999x")
        XCTAssertNil(big.firstMatch(in: String(repeating: "word ", count: 2000)))
    }
}

final class SensitiveWordFilterTests: XCTestCase {
    /// What an iPhone user sees is APNs's module's to say (`aps.alert`): registered, as the worker registers it.
    override class func setUp() {
        super.setUp()
        _ = APNsModule.provider
    }

    private func job(_ payload: String) -> PushJob {
        let headers = PushHeaders(topic: "t", appTopic: "t", pushType: "alert", priority: 10, expiration: 0, collapseID: nil)
        return PushJob(message: PushMessage(seq: 1, id: "m", kind: .private, uuid: nil, headers: headers,
                                            payload: Array(payload.utf8), tokens: ["aa"], enqueuedAtMillis: nil))
    }

    func testScansTitleSubtitleBodyAndConfiguredFields() {
        let filter = SensitiveWordFilter(words: ["spam"], extraFields: ["data.preview"])
        XCTAssertEqual(filter.match(job(#"{"aps":{"alert":{"title":"S P A M"}}}"#)), "spam")
        XCTAssertEqual(filter.match(job(#"{"aps":{"alert":{"subtitle":"spam"}}}"#)), "spam")
        XCTAssertEqual(filter.match(job(#"{"aps":{"alert":{"body":"spam"}}}"#)), "spam")
        XCTAssertEqual(filter.match(job(#"{"aps":{"alert":"hi"},"data":{"preview":"spam"}}"#)), "spam")
        XCTAssertNil(filter.match(job(#"{"aps":{"alert":"hi"},"other":"spam"}"#)), "unlisted custom keys are not scanned")
    }

    /// A localized alert shows its `loc-args` in place of a title, subtitle or body: they are read as those are.
    func testScansTheLocArgsOfALocalizedAlert() {
        let filter = SensitiveWordFilter(words: ["spam"])
        XCTAssertEqual(filter.match(job(#"{"aps":{"alert":{"loc-args":["Alice","buy spam"],"loc-key":"MSG_FMT"}}}"#)), "spam")
        XCTAssertEqual(filter.match(job(#"{"aps":{"alert":{"title-loc-args":["s p a m"],"title-loc-key":"T_FMT"}}}"#)), "spam")
        XCTAssertEqual(filter.match(job(#"{"aps":{"alert":{"subtitle-loc-args":["spam"],"subtitle-loc-key":"S_FMT"}}}"#)), "spam")
        XCTAssertNil(filter.match(job(#"{"aps":{"alert":{"loc-args":["Alice","hello"],"loc-key":"MSG_FMT"}}}"#)))
    }

    func testWordsFileIsUTF8OneWordPerLine() throws {
        let path = NSTemporaryDirectory() + "words-\(UUID().uuidString).txt"
        try "# comment\n赌博\n\n  spam  \n".write(toFile: path, atomically: true, encoding: .utf8)
        var settings = FilterSettings()
        settings.wordsFile = path
        let filter = try SensitiveWordFilter(settings: settings)
        XCTAssertEqual(filter.matcher.words, ["赌博", "spam"])
        settings.wordsFile = "/nonexistent/words.txt"
        XCTAssertThrowsError(try SensitiveWordFilter(settings: settings))
    }

    func testStageDropsMatchesAndReportsThem() async throws {
        let stage = FilterStage(filter: try LiveFilter(settings: wordsSettings(["spam"])))
        let (input, feed) = AsyncStream.makeStream(of: [PushJob].self)
        let (output, out) = AsyncStream.makeStream(of: [PushJob].self)
        let reported = ResultBox()
        feed.yield([job(#"{"aps":{"alert":"spam"}}"#), job(#"{"aps":{"alert":"fine"}}"#)])
        feed.finish()
        await stage.run(input: input, output: out) { reported.append($0) }
        var passed: [PushJob] = []
        for await jobs in output { passed += jobs }
        XCTAssertEqual(passed.count, 1)
        XCTAssertEqual(reported.count, 1)
    }
}

/// Settings whose words (and allow) files hold the given lines.
func wordsSettings(_ words: [String], allow: [String] = []) throws -> FilterSettings {
    var settings = FilterSettings()
    settings.wordsFile = NSTemporaryDirectory() + "words-\(UUID().uuidString).txt"
    try words.joined(separator: "\n").write(toFile: settings.wordsFile, atomically: true, encoding: .utf8)
    if !allow.isEmpty {
        settings.allowFile = NSTemporaryDirectory() + "allow-\(UUID().uuidString).txt"
        try allow.joined(separator: "\n").write(toFile: settings.allowFile, atomically: true, encoding: .utf8)
    }
    return settings
}

final class ResultBox: @unchecked Sendable {
    private let lock = NSLock()
    private var results: [PipelineResult] = []
    func append(_ result: PipelineResult) { lock.lock(); results.append(result); lock.unlock() }
    var count: Int { lock.lock(); defer { lock.unlock() }; return results.count }
}
