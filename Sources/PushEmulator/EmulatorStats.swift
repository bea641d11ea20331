import Foundation
import NIOConcurrencyHelpers

/// Counters by status and reason, readable as JSON at `GET /_emulator/stats`.
public final class EmulatorStats: Sendable {
    private struct Counts {
        var requests = 0
        var connections = 0
        var goAways = 0
        var peakStreams = 0
        var refused = 0
        var collapses = 0
        var delayedAnswers = 0
        var delayedBatches = 0
        var byStatus: [Int: Int] = [:]
        var byReason: [String: Int] = [:]
    }

    private let counts = NIOLockedValueBox(Counts())
    /// `messages:send`'s own counters (the ones above are APNs's), the `fcm` object of `json`.
    public let fcm = FCMStats()

    public init() {}

    func record(_ answer: Answer) {
        counts.withLockedValue { counts in
            counts.requests += 1
            counts.byStatus[answer.status, default: 0] += 1
            if let reason = answer.reason { counts.byReason[reason, default: 0] += 1 }
        }
    }

    func connectionOpened() { counts.withLockedValue { $0.connections += 1 } }

    func goAwaySent() { counts.withLockedValue { $0.goAways += 1 } }

    public var goAways: Int { counts.withLockedValue { $0.goAways } }

    func streamRefused() { counts.withLockedValue { $0.refused += 1 } }

    /// Streams refused (REFUSED_STREAM) for exceeding SETTINGS_MAX_CONCURRENT_STREAMS.
    public var refusedStreams: Int { counts.withLockedValue { $0.refused } }

    func streamLimitCollapsed() { counts.withLockedValue { $0.collapses += 1 } }

    /// How often a connection's stream limit dropped to 1 after an error (`collapseStreamsOnError`).
    public var streamLimitCollapses: Int { counts.withLockedValue { $0.collapses } }

    func noteActiveStreams(_ active: Int) { counts.withLockedValue { $0.peakStreams = max($0.peakStreams, active) } }

    /// The most streams one connection had open at once.
    public var peakConcurrentStreams: Int { counts.withLockedValue { $0.peakStreams } }

    public var requests: Int { counts.withLockedValue { $0.requests } }

    func delayedAnswersWritten(_ answers: Int) {
        guard answers > 0 else { return }
        counts.withLockedValue { counts in
            counts.delayedAnswers += answers
            counts.delayedBatches += 1
        }
    }

    /// Answers written after a latency, APNs's and FCM's (`DelayedAnswers`), and the batches they went out in: one
    /// flush of the connection per batch.
    public var delayedAnswers: Int { counts.withLockedValue { $0.delayedAnswers } }
    public var delayedAnswerBatches: Int { counts.withLockedValue { $0.delayedBatches } }

    public func count(status: Int) -> Int { counts.withLockedValue { $0.byStatus[status] ?? 0 } }

    public func count(reason: String) -> Int { counts.withLockedValue { $0.byReason[reason] ?? 0 } }

    public var connections: Int { counts.withLockedValue { $0.connections } }

    public var json: String {
        counts.withLockedValue { counts in
            let object: [String: Any] = [
                "requests": counts.requests, "connections": counts.connections, "goaways": counts.goAways, "peak_concurrent_streams": counts.peakStreams, "refused_streams": counts.refused,
                "stream_limit_collapses": counts.collapses,
                "delayed_answers": counts.delayedAnswers, "delayed_answer_batches": counts.delayedBatches,
                "by_status": Dictionary(uniqueKeysWithValues: counts.byStatus.map { (String($0.key), $0.value) }),
                "by_reason": counts.byReason,
                "fcm": fcm.jsonObject,
            ]
            let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
            return String(decoding: data, as: UTF8.self)
        }
    }
}

/// Appends every delivered notification to a file as one JSON line: what reached "the device".
final class DeliveryRecorder: Sendable {
    private let handle: NIOLockedValueBox<FileHandle?>

    init(path: String?) throws {
        guard let path else {
            handle = NIOLockedValueBox(nil)
            return
        }
        if !FileManager.default.fileExists(atPath: path) { FileManager.default.createFile(atPath: path, contents: nil) }
        guard let file = FileHandle(forWritingAtPath: path) else {
            throw EmulatorError.configuration("record file \(path) cannot be written")
        }
        file.seekToEndOfFile()
        handle = NIOLockedValueBox(file)
    }

    var enabled: Bool { handle.withLockedValue { $0 != nil } }

    /// One JSON line per accepted request, written by hand: the body was already checked to be a JSON object
    /// (RequestJudge), so it goes in as it came. Parsing and re-serializing it with Foundation made recording
    /// cost the emulator two thirds of its rate, which hid the rate under test.
    func record(token: String, request: IncomingRequest, apnsID: String) {
        var fields: [(String, String)] = [("apns_id", apnsID)]
        for (name, key) in [("apns-collapse-id", "collapse_id"), ("apns-expiration", "expiration"),
                            ("apns-priority", "priority"), ("apns-push-type", "push_type")] {
            if let value = request.header(name) { fields.append((key, value)) }
        }
        var line: [UInt8] = Array("{".utf8)
        for (key, value) in fields { Self.appendString(key, value, to: &line) }
        line.append(contentsOf: Array("\"payload\":".utf8))
        // Valid JSON holds raw line breaks only as whitespace (never inside strings): spaces keep one line per record.
        line.append(contentsOf: request.body.isEmpty ? Array("null".utf8) : request.body.map { $0 == 0x0a || $0 == 0x0d ? 0x20 : $0 })
        line.append(contentsOf: Array(",\"received_at\":\(Int64(Date().timeIntervalSince1970 * 1000)),".utf8))
        Self.appendString("token", token, to: &line)
        if let topic = request.header("apns-topic") { Self.appendString("topic", topic, to: &line) }
        line.removeLast()  // the last field's comma
        line.append(contentsOf: Array("}\n".utf8))
        append(line)
    }

    /// Writes one whole line (under the lock: lines of concurrent writers never interleave).
    func append(_ line: [UInt8]) {
        let data = Data(line)
        handle.withLockedValue { $0?.write(data) }
    }

    /// `"key":"value",` with the value escaped as JSON requires (quotes, backslashes, control characters).
    static func appendString(_ key: String, _ value: String, to line: inout [UInt8]) {
        line.append(contentsOf: Array("\"\(key)\":\"".utf8))
        for byte in value.utf8 {
            switch byte {
            case 0x22, 0x5c: line.append(0x5c); line.append(byte)
            case 0..<0x20: line.append(contentsOf: Array(String(format: "\\u%04x", Int(byte)).utf8))
            default: line.append(byte)
            }
        }
        line.append(contentsOf: Array("\",".utf8))
    }
}
