import Foundation
import PushCore

/// A v3 app's service account key file, as Huawei's API Console downloads it (JSON): `project_id` (the
/// `<project_id>` of the send path), `key_id` (the JWT's `kid`), `private_key` (PKCS#8 PEM, RSA), `sub_account`
/// (the JWT's `iss`) and, in some downloads, `token_uri` (the JWT's `aud` when present). The key is a `Secret`:
/// printing an account never shows it, and errors name the file and the field, never the text.
public struct HuaweiServiceAccount: Sendable, Equatable, CustomStringConvertible {
    public let file: String
    public let projectID: String
    public let keyID: String
    public let subAccount: String
    public let privateKeyPEM: Secret
    /// Nil when the file names none: the audience is then `huawei.token_uri`.
    public let tokenURI: String?

    public init(file: String, projectID: String, keyID: String, subAccount: String, privateKeyPEM: Secret, tokenURI: String?) {
        self.file = file
        self.projectID = projectID
        self.keyID = keyID
        self.subAccount = subAccount
        self.privateKeyPEM = privateKeyPEM
        self.tokenURI = tokenURI
    }

    public var description: String {
        "HuaweiServiceAccount(project \(projectID), key \(keyID), sub_account \(subAccount), file \(file))"
    }

    public static func load(path: String) throws(HuaweiCredentialError) -> HuaweiServiceAccount {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw HuaweiCredentialError(file: path, reason: "service account key file not found or not readable")
        }
        return try parse(Array(data), path: path)
    }

    /// The account from the file's bytes (`path` only names it in errors). The key is checked by loading it
    /// (`PS256Key`), so a file that cannot sign is a startup error, not a paused app.
    public static func parse(_ bytes: [UInt8], path: String) throws(HuaweiCredentialError) -> HuaweiServiceAccount {
        let document: JSONValue
        do {
            document = try JSONParser.parse(bytes, maxDepth: 8)
        } catch {
            // The parser's message names an offset, never the text around it: nothing of the key leaks.
            throw HuaweiCredentialError(file: path, reason: "not valid JSON (\(error.description))")
        }
        guard document.objectMembers != nil else { throw HuaweiCredentialError(file: path, reason: "not a JSON object") }
        func field(_ name: String) throws(HuaweiCredentialError) -> String {
            guard let value = document[name] else { throw HuaweiCredentialError(file: path, reason: "missing field \"\(name)\"") }
            // Huawei writes ids as strings; a number is taken as its digits rather than refused.
            if let number = value.exactInteger { return String(number) }
            guard let text = value.stringValue, !text.isEmpty else {
                throw HuaweiCredentialError(file: path, reason: "field \"\(name)\" must be a non-empty string, not \(value.typeName)")
            }
            return text
        }
        var tokenURI: String?
        if let given = document["token_uri"]?.stringValue, !given.isEmpty { tokenURI = given }
        let account = HuaweiServiceAccount(file: path, projectID: try field("project_id"), keyID: try field("key_id"),
                                           subAccount: try field("sub_account"), privateKeyPEM: Secret(try field("private_key")),
                                           tokenURI: tokenURI)
        _ = try PS256Key(pem: account.privateKeyPEM, file: path)
        return account
    }
}
