import Foundation
import Logging
import PushCore

/// `log.format: json`: one JSON object per line on standard error, with the fields the text format shows
/// (`timestamp`, `level`, `label`, `source`, `message`, then every metadata key, nested values as JSON), for log
/// pipelines that parse JSON (as gorush users' do). Keys are written sorted. A metadata key that names one of
/// the fixed fields is kept as `metadata.<key>`, never overwriting it.
public struct JSONLogHandler: LogHandler {
    public var logLevel: Logger.Level
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    private let label: String
    private let write: @Sendable ([UInt8]) -> Void

    static let fixedKeys: Set<String> = ["timestamp", "level", "label", "source", "message"]

    public init(label: String, level: Logger.Level = .info, write: @escaping @Sendable ([UInt8]) -> Void = JSONLogHandler.standardError) {
        self.label = label
        self.logLevel = level
        self.write = write
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { $1 } }
        if let extra = event.metadata { merged.merge(extra) { $1 } }
        write(Self.line(timestamp: Date(), level: event.level, label: label, source: event.source,
                        message: event.message.description, metadata: merged))
    }

    /// The bytes of one line, newline included.
    static func line(timestamp: Date, level: Logger.Level, label: String, source: String, message: String,
                     metadata: Logger.Metadata) -> [UInt8] {
        var members = [
            JSONMember(key: "timestamp", value: .string(Date.ISO8601FormatStyle(includingFractionalSeconds: true).format(timestamp))),
            JSONMember(key: "level", value: .string(level.rawValue)),
            JSONMember(key: "label", value: .string(label)),
            JSONMember(key: "source", value: .string(source)),
            JSONMember(key: "message", value: .string(message)),
        ]
        for (key, value) in metadata {
            members.append(JSONMember(key: fixedKeys.contains(key) ? "metadata.\(key)" : key, value: json(value)))
        }
        var bytes = JSONWriter.canonical(.object(members))
        bytes.append(UInt8(ascii: "\n"))
        return bytes
    }

    private static func json(_ value: Logger.Metadata.Value) -> JSONValue {
        switch value {
        case .string(let text): return .string(text)
        case .stringConvertible(let convertible): return .string(convertible.description)
        case .array(let items): return .array(items.map(json))
        case .dictionary(let pairs): return .object(pairs.map { JSONMember(key: $0.key, value: json($0.value)) })
        }
    }

    /// One write(2) per line, so lines of concurrent threads never interleave.
    public static let standardError: @Sendable ([UInt8]) -> Void = { bytes in
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = Foundation.write(2, raw.baseAddress! + offset, raw.count - offset)
                if written <= 0 {
                    if written < 0 && errno == EINTR { continue }
                    return
                }
                offset += written
            }
        }
    }
}
