import Foundation
import Logging

/// A log handler that keeps every line (level and message) in memory, for tests that count what was logged.
final class CapturedLogs: @unchecked Sendable {
    struct Line {
        var level: Logger.Level
        var message: String
    }

    private let lock = NSLock()
    private var captured: [Line] = []

    var lines: [Line] { lock.withLock { captured } }

    /// A logger at `level` whose lines land here.
    func logger(level: Logger.Level = .trace) -> Logger {
        var logger = Logger(label: "captured") { _ in Handler(sink: self) }
        logger.logLevel = level
        return logger
    }

    fileprivate func append(_ line: Line) { lock.withLock { captured.append(line) } }

    private struct Handler: LogHandler {
        let sink: CapturedLogs
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            sink.append(Line(level: event.level, message: "\(event.message)"))
        }
    }
}
