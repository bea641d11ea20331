/// What is wrong with a Huawei app's credential files: names the file and what is wrong with it, never the secret
/// or the key, so the text is safe for logs and for `check-config`.
public struct HuaweiCredentialError: Error, CustomStringConvertible, Equatable {
    public let file: String
    public let reason: String

    public init(file: String, reason: String) {
        self.file = file
        self.reason = reason
    }

    public var description: String { "Huawei credential file \(file): \(reason)" }
}
