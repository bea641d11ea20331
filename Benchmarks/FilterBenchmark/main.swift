import Filter
import Foundation

// The sensitive-word filter's speed: a 10,000-entry list (English words in all four forms, Chinese words)
// against 1 KB alert texts (English, Chinese, mixed), in MB/s of text scanned. Texts that match nothing
// are the worst case (the whole text is read); the allow list variant collects every occurrence.
// Usage: filter-benchmark [ROUNDS]

let letters = Array("abcdefghijklmnopqrstuvwxyz")
let han = (0x4E00..<0x4E00 + 3000).compactMap { Unicode.Scalar($0).map(Character.init) }

func word(_ length: Int) -> String { String((0..<length).map { _ in letters.randomElement()! }) }
func chinese(_ length: Int) -> String { String((0..<length).map { _ in han.randomElement()! }) }

let rounds = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 200 : 200

var list: [String] = []
for index in 0..<10_000 {
    switch index % 5 {
    case 0: list.append(chinese(2 + index % 3))
    case 1: list.append(word(5 + index % 6) + "*")
    case 2: list.append("*" + word(6 + index % 4) + "*")
    default: list.append(word(4 + index % 7))
    }
}

func text(_ make: () -> String) -> String {
    var out = ""
    while out.utf8.count < 1024 { out += make() }
    return out
}
let english = (0..<100).map { _ in text { word(Int.random(in: 2...9)) + (Bool.random() ? " " : ", ") } }
let chineseTexts = (0..<100).map { _ in text { chinese(Int.random(in: 2...12)) + "，" } }
let mixed = (0..<100).map { _ in text { Bool.random() ? word(Int.random(in: 2...9)) + " " : chinese(Int.random(in: 2...6)) } }

let tableStart = ContinuousClock.now
_ = SensitiveWordMatcher(words: ["warm-up"]).firstMatch(in: "x")  // builds the per-process folding table
let tableTime = ContinuousClock.now - tableStart
let buildStart = ContinuousClock.now
let filter = SensitiveWordFilter(words: list)
let buildTime = ContinuousClock.now - buildStart
let withAllow = SensitiveWordFilter(words: list, allow: (0..<1000).map { _ in word(8) })

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

func measure(_ name: String, _ texts: [String], _ filter: SensitiveWordFilter) {
    let bytes = texts.reduce(0) { $0 + $1.utf8.count }
    var hits = 0
    let start = ContinuousClock.now
    for _ in 0..<rounds {
        for text in texts where filter.firstBlocked(in: text) != nil { hits += 1 }
    }
    let elapsed = seconds(ContinuousClock.now - start)
    let megabytes = Double(bytes * rounds) / 1_000_000
    let label = name.padding(toLength: 38, withPad: " ", startingAt: 0)
    print(label + String(format: "%7.1f MB/s  %6.1f µs per 1 KB text  (%d of %d texts matched)",
                         megabytes / elapsed, elapsed / Double(texts.count * rounds) * 1e6, hits / rounds, texts.count))
}

print(String(format: "folding table (once per process): %.0f ms; 10,000-entry list compiled in %.0f ms",
             seconds(tableTime) * 1000, seconds(buildTime) * 1000))
measure("English, 1 KB", english, filter)
measure("Chinese, 1 KB", chineseTexts, filter)
measure("mixed, 1 KB", mixed, filter)
measure("mixed, 1 KB, 1,000-entry allow list", mixed, withAllow)
