import Foundation
import ProviderKit
import PushCore

/// A v1 app's OAuth 2.0 client: its id (the `app_id`) and the secret read from `client_secret_file`. The secret is
/// a `Secret`: no `description`, dump or log line shows it, and errors name the file only.
public struct HuaweiClientCredentials: Sendable, Equatable, CustomStringConvertible {
    public let clientID: String
    public let secret: Secret
    /// Where the secret came from, for messages.
    public let file: String

    public init(clientID: String, secret: Secret, file: String = "") {
        self.clientID = clientID
        self.secret = secret
        self.file = file
    }

    public var description: String { "HuaweiClientCredentials(client \(clientID), secret from \(file))" }

    /// Reads the secret from `path`, surrounding whitespace (a trailing newline of an editor, a mounted Secret's)
    /// trimmed. An empty client id, a missing or unreadable file, a file that is not UTF-8 or holds nothing but
    /// whitespace is an error that names the file.
    public static func load(clientID: String, secretFile path: String) throws(HuaweiCredentialError) -> HuaweiClientCredentials {
        do {
            let loaded = try ClientCredentials.load(clientID: clientID, clientIDKey: "app_id", secretFile: path)
            return HuaweiClientCredentials(clientID: loaded.clientID, secret: loaded.secret, file: path)
        } catch {
            throw HuaweiCredentialError(file: error.file, reason: error.reason)
        }
    }

    /// The client-credentials grant, form-encoded (Huawei's secrets hold `+`, `/` and `=`, which a form must
    /// escape; Huawei's own Go demo concatenates them raw).
    var grantForm: String { ClientCredentials(clientID: clientID, secret: secret).grantForm }
}
