import Filter
import Foundation
import PushCore
import XCTest

/// Issue 10: precise on words, still resistant to evasion, variant-insensitive, with exceptions.
final class PrecisionTests: XCTestCase {
    func testWholeWordsNeverMatchInsideOrAcrossInnocentWords() {
        let matcher = SensitiveWordMatcher(words: ["badword", "ass", "bad word"])
        XCTAssertNil(matcher.firstMatch(in: "bad words are not here: badwords"), "two words run together, or a longer word")
        XCTAssertNil(matcher.firstMatch(in: "a classic assessment in Massachusetts"), "the Scunthorpe problem")
        XCTAssertNil(matcher.firstMatch(in: "bad.words"))
        XCTAssertEqual(matcher.firstMatch(in: "what a BADWORD"), "badword")
        XCTAssertEqual(matcher.firstMatch(in: "you ass!"), "ass")
        XCTAssertEqual(matcher.firstMatch(in: "such a bad  word"), "bad word", "a listed phrase matches its words in order")
    }

    func testPrefixSuffixAndInfixForms() {
        let matcher = SensitiveWordMatcher(words: ["spam*", "*bot", "*xx*"])
        XCTAssertEqual(matcher.firstMatch(in: "spammers everywhere"), "spam*")
        XCTAssertNil(matcher.firstMatch(in: "antispam"), "a prefix form does not match the end of a word")
        XCTAssertEqual(matcher.firstMatch(in: "a chatbot"), "*bot")
        XCTAssertNil(matcher.firstMatch(in: "bottle"))
        XCTAssertEqual(matcher.firstMatch(in: "boxxes"), "*xx*")
    }

    func testSeparatorsBetweenLettersStillMatch() {
        let matcher = SensitiveWordMatcher(words: ["spam", "casino royale"])
        for evasion in ["s p a m", "s.p.a.m", "S-P-A-M", "s_p_a_m", "sp\u{200B}am", "s\u{200C}p\u{200D}a\u{2060}m",
                        "ＳＰＡＭ", "s. p. a. m.", "buy s p a m now"] {
            XCTAssertEqual(matcher.firstMatch(in: evasion), "spam", evasion)
        }
        XCTAssertEqual(matcher.firstMatch(in: "Casino-Royale tonight"), "casino royale")
        XCTAssertNil(matcher.firstMatch(in: "s pam"), "pieces of two letters or more are words of their own")
    }

    func testLookAlikeLettersAndAccents() {
        let matcher = SensitiveWordMatcher(words: ["spam", "paypal"])
        XCTAssertEqual(matcher.firstMatch(in: "\u{0455}\u{0440}\u{0430}m"), "spam", "Cyrillic ѕ р а")
        XCTAssertEqual(matcher.firstMatch(in: "p\u{0430}yp\u{03B1}l"), "paypal", "Cyrillic а, Greek α")
        XCTAssertEqual(matcher.firstMatch(in: "spåm"), "spam", "accents are ignored")
        XCTAssertEqual(matcher.firstMatch(in: "paypa1"), "paypal", "digit 1 looks like l")
    }

    func testTraditionalAndSimplifiedChineseAreOneWord() {
        let simplifiedList = SensitiveWordMatcher(words: ["赌博"])
        XCTAssertEqual(simplifiedList.firstMatch(in: "一起去賭博吧"), "赌博", "traditional text, simplified list")
        let traditionalList = SensitiveWordMatcher(words: ["賭博"])
        XCTAssertEqual(traditionalList.firstMatch(in: "一起去赌博吧"), "賭博", "simplified text, traditional list")
        XCTAssertEqual(simplifiedList.firstMatch(in: "赌 · 博"), "赌博", "separators inside unspaced text")
        XCTAssertEqual(simplifiedList.firstMatch(in: "去赌博lol"), "赌博", "unspaced words match anywhere")
        XCTAssertNil(simplifiedList.firstMatch(in: "赌场和博物馆"))
    }

    func testAllowListExempts() {
        let filter = SensitiveWordFilter(words: ["*ass*", "spam"], allow: ["classic", "assess*", "pass"])
        XCTAssertNil(filter.firstBlocked(in: "a classic assessment, pass it on"))
        XCTAssertEqual(filter.firstBlocked(in: "what a badass"), "*ass*")
        XCTAssertEqual(filter.firstBlocked(in: "classic spam"), "spam", "an exception covers its own words only")
        XCTAssertEqual(filter.firstBlocked(in: "classic and badass"), "*ass*", "one uncovered occurrence is enough")
    }

    func testTheFoldingCoversTheWholeBasicPlaneWithoutTrapping() {
        // Every BMP scalar in one text: no crash, and the stream is built in one pass.
        var text = String.UnicodeScalarView()
        for value in UInt32(0)..<0x10000 { if let scalar = Unicode.Scalar(value) { text.append(scalar) } }
        let matcher = SensitiveWordMatcher(words: ["spam", "赌博"])
        _ = matcher.firstMatch(in: String(text))
    }
}
