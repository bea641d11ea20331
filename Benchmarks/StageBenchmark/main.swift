import APNsProvider
import Foundation
import Merger
import PushCore

// CPU per message of the worker's in-process stages, without Redis or HTTP/2: parsing a queue element
// (MessageParser: strict JSON, validation, canonical payload) and merging a window (Merger). The elements
// are those `scripts/bench.sh` enqueues. Usage: stage-benchmark [MESSAGES] (scripts/bench.sh --stages).

let count = CommandLine.arguments.count > 1 ? max(1, Int(CommandLine.arguments[1]) ?? 200_000) : 200_000

func element(_ i: Int, kind: String, tokens: Int) -> [UInt8] {
    let list = (0..<tokens).map { "\"" + String(repeating: "0", count: 48) + String(format: "%016x", i * tokens + $0 + 1) + "\"" }
    let uuid = kind == "private" ? "" : ",\"uuid\":\"u\(i / 10)\""
    return Array(("{\"id\":\"b\(i)\",\"kind\":\"\(kind)\"\(uuid),\"topic\":\"com.example.chat\",\"tokens\":[\(list.joined(separator: ","))],"
                  + "\"payload\":{\"aps\":{\"alert\":\"hello \(i / 10)\"}}}").utf8)
}

func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
        + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
}

// The default provider's rules are its module's: registered, as the worker registers it, before the parser is made.
_ = APNsModule.provider
let parser = MessageParser()
let now = Int64(Date().timeIntervalSince1970)

for (kind, tokens) in [("private", 1), ("group", 1), ("group", 10)] {
    let elements = (0..<count).map { element($0, kind: kind, tokens: tokens) }
    var messages: [PushMessage] = []
    messages.reserveCapacity(count)
    // Timed with each message freed at once, as the worker frees it once sent: keeping all of them would time
    // the page faults of a growing heap instead (perf: clear_page_rep). The second pass keeps them for merging.
    var valid = 0
    let parseStart = cpuSeconds()
    for (i, raw) in elements.enumerated() {
        if case .valid = parser.parse(raw, seq: UInt64(i), now: now) { valid += 1 }
    }
    let parsed = cpuSeconds() - parseStart
    guard valid == count else { fatalError("\(count - valid) elements are invalid") }
    for (i, raw) in elements.enumerated() {
        guard case .valid(let message, _) = parser.parse(raw, seq: UInt64(i), now: now) else { fatalError("element \(i) is invalid") }
        messages.append(message)
    }
    let mergeStart = cpuSeconds()
    var jobs = 0
    for start in stride(from: 0, to: messages.count, by: 500) {
        let batch = MessageBatch(kind: MessageKind(rawValue: kind)!, messages: Array(messages[start..<min(messages.count, start + 500)]))
        jobs += Merger().merge(batch).count
    }
    let merged = cpuSeconds() - mergeStart
    print("\(kind), \(tokens) token(s): parse \(String(format: "%.2f", parsed / Double(count) * 1e6)) µs/message, "
          + "merge \(String(format: "%.2f", merged / Double(count) * 1e6)) µs/message (\(jobs) jobs)")
}
