import Foundation
import Logging

/// A log handler that keeps every line (level, message and metadata) in memory, for tests that look at what a
/// lane or a worker logged.
public final class CapturedLogs: @unchecked Sendable {
    public struct Line: Sendable {
        public var level: Logger.Level
        public var message: String
        public var metadata: Logger.Metadata
    }

    private let lock = NSLock()
    private var captured: [Line] = []

    public init() {}

    public var lines: [Line] { lock.withLock { captured } }

    /// A logger at `level` whose lines land here.
    public func logger(level: Logger.Level = .trace) -> Logger {
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
            sink.append(Line(level: event.level, message: "\(event.message)", metadata: metadata.merging(event.metadata ?? [:]) { $1 }))
        }
    }
}
