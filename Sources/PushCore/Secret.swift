/// A configuration value that must never reach a log line: a Redis password, a certificate password.
/// Every way Swift turns a value into text (`description`, `debugDescription`, reflection as used by
/// `dump` and by the default description of a struct that holds one) prints `<redacted>`; only code
/// that asks for `.value` by name sees it.
public struct Secret: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable,
    ExpressibleByStringLiteral {
    public let value: String

    public init(_ value: String) { self.value = value }
    public init(stringLiteral value: String) { self.value = value }

    public var isEmpty: Bool { value.isEmpty }
    public var description: String { "<redacted>" }
    public var debugDescription: String { "<redacted>" }
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}
