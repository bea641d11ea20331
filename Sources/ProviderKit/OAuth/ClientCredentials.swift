import Foundation
import PushCore

/// An app's OAuth 2.0 client for the client-credentials grant: its id (from the configuration) and the secret read
/// from a file. The secret is a `Secret`: no `description`, dump or log line shows it, and errors name the file only.
public struct ClientCredentials: Sendable, Equatable, CustomStringConvertible {
    public let clientID: String
    public let secret: Secret
    /// Where the secret came from, for messages.
    public let file: String

    public init(clientID: String, secret: Secret, file: String = "") {
        self.clientID = clientID
        self.secret = secret
        self.file = file
    }

    public var description: String { "ClientCredentials(client \(clientID), secret from \(file))" }

    /// Reads the secret from `path`, surrounding whitespace (a trailing newline of an editor, a mounted Secret's)
    /// trimmed. An empty client id (`clientIDKey` names its configuration key), a missing or unreadable file, a file
    /// that is not UTF-8 or holds nothing but whitespace is an error that names the file.
    public static func load(clientID: String, clientIDKey: String, secretFile path: String) throws(CredentialFileError) -> ClientCredentials {
        guard !clientID.isEmpty else {
            throw CredentialFileError(file: path, reason: "the app has no \(clientIDKey) (the OAuth client id of the secret)")
        }
        return ClientCredentials(clientID: clientID, secret: try SecretFile.read(path, what: "client secret"), file: path)
    }

    /// The client-credentials grant, form-encoded (the vendors' secrets hold `+`, `/` and `=`, which a form must
    /// escape).
    public var grantForm: String {
        "grant_type=client_credentials&client_id=\(TokenEndpoint.formEncode(clientID))"
            + "&client_secret=\(TokenEndpoint.formEncode(secret.value))"
    }
}

/// A secret kept in a file of its own (a client secret, an app secret, a master secret).
public enum SecretFile {
    /// The file's text, surrounding whitespace trimmed; `what` names the secret in errors ("client secret").
    public static func read(_ path: String, what: String) throws(CredentialFileError) -> Secret {
        guard !path.isEmpty else { throw CredentialFileError(file: path, reason: "no \(what) file is set") }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CredentialFileError(file: path, reason: "\(what) file not found or not readable")
        }
        guard let text = String(bytes: data, encoding: .utf8) else {
            throw CredentialFileError(file: path, reason: "the \(what) file is not UTF-8 text")
        }
        let secret = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !secret.isEmpty else { throw CredentialFileError(file: path, reason: "the \(what) file is empty") }
        return Secret(secret)
    }
}

/// What is wrong with an app's credential file: names the file and what is wrong with it, never the secret, so the
/// text is safe for logs and for `check-config`.
public struct CredentialFileError: Error, CustomStringConvertible, Equatable {
    public let file: String
    public let reason: String

    public init(file: String, reason: String) {
        self.file = file
        self.reason = reason
    }

    public var description: String { "credential file \(file): \(reason)" }
}
