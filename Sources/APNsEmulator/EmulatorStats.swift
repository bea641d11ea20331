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
        var byStatus: [Int: Int] = [:]
        var byReason: [String: Int] = [:]
    }

    private let counts = NIOLockedValueBox(Counts())

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

    public func count(status: Int) -> Int { counts.withLockedValue { $0.byStatus[status] ?? 0 } }

    public func count(reason: String) -> Int { counts.withLockedValue { $0.byReason[reason] ?? 0 } }

    public var connections: Int { counts.withLockedValue { $0.connections } }

    public var json: String {
        counts.withLockedValue { counts in
            let object: [String: Any] = [
                "requests": counts.requests, "connections": counts.connections, "goaways": counts.goAways, "peak_concurrent_streams": counts.peakStreams, "refused_streams": counts.refused,
                "stream_limit_collapses": counts.collapses,
                "by_status": Dictionary(uniqueKeysWithValues: counts.byStatus.map { (String($0.key), $0.value) }),
                "by_reason": counts.byReason,
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

    func record(token: String, request: IncomingRequest, apnsID: String) {
        var object: [String: Any] = ["token": token, "apns_id": apnsID, "received_at": Int64(Date().timeIntervalSince1970 * 1000)]
        for (name, key) in [("apns-topic", "topic"), ("apns-push-type", "push_type"), ("apns-priority", "priority"),
                            ("apns-expiration", "expiration"), ("apns-collapse-id", "collapse_id")] {
            if let value = request.header(name) { object[key] = value }
        }
        object["payload"] = (try? JSONSerialization.jsonObject(with: Data(request.body))) ?? NSNull()
        guard var line = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else { return }
        line.append(0x0a)
        handle.withLockedValue { $0?.write(line) }
    }
}
