import Filter
import Foundation
import TestSupport
import XCTest

/// The corpus in `Corpus/`: texts that must and must not be dropped by `words.txt` (with `allow.txt`),
/// in English, Chinese (both scripts), mixed and evasion forms. Prints precision and recall; every
/// must-match text must name its entry, and no must-not-match text may be dropped.
final class CorpusTests: XCTestCase {
    let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Corpus")

    private func lines(_ name: String) throws -> [String] {
        try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
            .split(separator: "\n").map(String.init).filter { !$0.isEmpty && !$0.hasPrefix("#") }
    }

    func testPrecisionAndRecallOnTheCorpus() throws {
        let filter = SensitiveWordFilter(words: try lines("words.txt"), allow: try lines("allow.txt"))
        var truePositives = 0, falseNegatives: [String] = [], wrongEntry: [String] = [], falsePositives: [String] = []
        for line in try lines("must-match.txt") {
            let parts = line.split(separator: "\t", maxSplits: 1).map(String.init)
            XCTAssertEqual(parts.count, 2, "corpus line without a tab: \(line)")
            guard parts.count == 2 else { continue }
            switch filter.firstBlocked(in: parts[1]) {
            case nil: falseNegatives.append(parts[1])
            case parts[0]?: truePositives += 1
            case let other?: wrongEntry.append("\(parts[1]) -> \(other)")
            }
        }
        for text in try lines("must-not-match.txt") {
            if let entry = filter.firstBlocked(in: text) { falsePositives.append("\(text) -> \(entry)") }
        }
        // Evasions the filter is known not to catch count against recall, not against the assertions.
        var knownMissed = 0, knownCaught = 0
        for line in try lines("known-misses.txt") {
            let text = line.split(separator: "\t", maxSplits: 1).last.map(String.init) ?? line
            if filter.firstBlocked(in: text) == nil { knownMissed += 1 } else { knownCaught += 1 }
        }
        let matched = truePositives + wrongEntry.count + knownCaught
        let precision = Double(matched) / Double(max(1, matched + falsePositives.count))
        let recall = Double(matched) / Double(max(1, matched + falseNegatives.count + knownMissed))
        printFigure(String(format: "filter corpus: precision %.3f, recall %.3f (%d texts to drop, %d known misses among them; %d innocent texts)",
                     precision, recall, matched + falseNegatives.count + knownMissed, knownMissed, try lines("must-not-match.txt").count))
        // For comparison: every entry as an infix (`*word*`), the way substring filters match.
        let substring = SensitiveWordFilter(words: try lines("words.txt").map { "*\($0.trimmingCharacters(in: CharacterSet(charactersIn: "*")))*" })
        let innocentHits = try lines("must-not-match.txt").filter { substring.firstBlocked(in: $0) != nil }.count
        printFigure("filter corpus, every entry as *infix* instead: \(innocentHits) of \(try lines("must-not-match.txt").count) innocent texts dropped")
        XCTAssertEqual(falseNegatives, [], "missed")
        XCTAssertEqual(falsePositives, [], "innocent texts dropped")
        XCTAssertEqual(wrongEntry, [], "matched another entry than expected")
    }
}
