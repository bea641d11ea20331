/// Why a Xiaomi app cannot be set up (a secret file that cannot be read, a `quota_reset` that does not parse):
/// a startup error, one sentence naming the file or the value, never a secret.
public struct XiaomiSetupError: Error, Equatable, CustomStringConvertible {
    public let description: String

    public init(_ description: String) { self.description = description }
}
