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
        guard !clientID.isEmpty else {
            throw HuaweiCredentialError(file: path, reason: "the app has no app_id (the OAuth client id of the secret)")
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw HuaweiCredentialError(file: path, reason: "client secret file not found or not readable")
        }
        guard let text = String(bytes: data, encoding: .utf8) else {
            throw HuaweiCredentialError(file: path, reason: "the client secret file is not UTF-8 text")
        }
        let secret = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !secret.isEmpty else {
            throw HuaweiCredentialError(file: path, reason: "the client secret file is empty")
        }
        return HuaweiClientCredentials(clientID: clientID, secret: Secret(secret), file: path)
    }

    /// The client-credentials grant, form-encoded (Huawei's secrets hold `+`, `/` and `=`, which a form must
    /// escape; Huawei's own Go demo concatenates them raw).
    var grantForm: String {
        "grant_type=client_credentials&client_id=\(TokenEndpoint.formEncode(clientID))"
            + "&client_secret=\(TokenEndpoint.formEncode(secret.value))"
    }
}
