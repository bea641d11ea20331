/// Text that must never reach a log line or an error: the client certificate's password. Every way Swift turns a
/// value into text (`description`, `debugDescription`, the reflection `dump` and a struct's default description
/// use) prints `<redacted>`; only code that asks for `.value` by name sees it. HTTP2Client's own (it does not
/// depend on PushCore and its `Secret`).
struct RedactedText: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    var value: String

    init(_ value: String) { self.value = value }

    var description: String { "<redacted>" }
    var debugDescription: String { "<redacted>" }
    var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}
