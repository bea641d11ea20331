import COpenSSL
import Foundation
import PushCore
import TLSClient

/// What is wrong with a service account file or its key; always names the file, never the key's text.
public struct ServiceAccountError: Error, CustomStringConvertible, Equatable {
    public let path: String
    public let reason: String

    public init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }

    public var description: String { "FCM service account file \(path): \(reason)" }
}

/// A Google service account key file (JSON), as the Firebase console downloads it: the fields the OAuth 2.0
/// JWT-bearer grant needs (docs/fcm.md, "Configuring": the service account). `privateKeyPEM` is a `Secret`, so
/// printing, dumping or logging an account never shows the key.
public struct ServiceAccount: Sendable, Equatable, CustomStringConvertible {
    public let file: String
    public let projectID: String
    public let privateKeyID: String
    public let privateKeyPEM: Secret
    public let clientEmail: String
    public let tokenURI: String

    public init(file: String, projectID: String, privateKeyID: String, privateKeyPEM: Secret, clientEmail: String, tokenURI: String) {
        self.file = file
        self.projectID = projectID
        self.privateKeyID = privateKeyID
        self.privateKeyPEM = privateKeyPEM
        self.clientEmail = clientEmail
        self.tokenURI = tokenURI
    }

    public var description: String {
        "ServiceAccount(\(clientEmail), project \(projectID), key \(privateKeyID), token_uri \(tokenURI), file \(file))"
    }

    /// Reads and checks `path`: a JSON object of `type` "service_account" with every field the grant needs
    /// as a non-empty string, and a private key that is a PEM RSA key (checked by loading it, see `RSAKey`).
    public static func load(path: String) throws(ServiceAccountError) -> ServiceAccount {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ServiceAccountError(path: path, reason: "file not found or not readable")
        }
        return try parse(Array(data), path: path)
    }

    /// The same from the file's bytes (`path` only names it in errors).
    public static func parse(_ bytes: [UInt8], path: String) throws(ServiceAccountError) -> ServiceAccount {
        let document: JSONValue
        do {
            document = try JSONParser.parse(bytes)
        } catch {
            // The parser's message names an offset, never the text around it: nothing of the key leaks.
            throw ServiceAccountError(path: path, reason: "not valid JSON (\(error.description))")
        }
        guard document.objectMembers != nil else {
            throw ServiceAccountError(path: path, reason: "not a JSON object")
        }
        func field(_ name: String) throws(ServiceAccountError) -> String {
            guard let value = document[name] else {
                throw ServiceAccountError(path: path, reason: "missing field \"\(name)\"")
            }
            guard let text = value.stringValue, !text.isEmpty else {
                throw ServiceAccountError(path: path, reason: "field \"\(name)\" must be a non-empty string, not \(value.typeName)")
            }
            return text
        }
        let type = try field("type")
        guard type == "service_account" else {
            throw ServiceAccountError(path: path, reason: "\"type\" is \"\(type)\", expected \"service_account\" (download a key of the Firebase project's service account)")
        }
        let account = ServiceAccount(
            file: path, projectID: try field("project_id"), privateKeyID: try field("private_key_id"),
            privateKeyPEM: Secret(try field("private_key")), clientEmail: try field("client_email"),
            tokenURI: try field("token_uri"))
        // The access token granted there sends to the whole project: https only (plain http to loopback alone).
        if let problem = TokenURI.problem(account.tokenURI) {
            throw ServiceAccountError(path: path, reason: "\"token_uri\" \(problem)")
        }
        // Loading the key is the only way to know it is one; the loaded key is dropped again.
        _ = try RSAKey(account: account)
        return account
    }
}

/// The RSA private key of a service account, loaded into OpenSSL. The pointer never leaves this type and
/// the module; signing is `AssertionSigner`'s.
final class RSAKey: @unchecked Sendable {
    // Immutable after init; OpenSSL allows concurrent signing with one EVP_PKEY.
    let key: OpaquePointer

    init(account: ServiceAccount) throws(ServiceAccountError) {
        // Google issues the key unencrypted and no password is configured for one: an encrypted key is refused
        // (never a prompt on the terminal) with a reason that says so.
        let read = PEMPrivateKey.read(pem: Array(account.privateKeyPEM.value.utf8))
        // OpenSSL's error queue may name what it choked on; it is cleared, not logged (it could quote the key).
        ERR_clear_error()
        let loaded: OpaquePointer
        switch read {
        case .success(let key): loaded = key
        case .failure(.unreadable):
            throw ServiceAccountError(path: account.file, reason: "\"private_key\" is not a PEM private key (expected \"-----BEGIN PRIVATE KEY-----\", PKCS#8)")
        case .failure:
            throw ServiceAccountError(path: account.file, reason: "\"private_key\" is an encrypted key: no password configured (Google's service account keys are not encrypted; download a new key)")
        }
        guard EVP_PKEY_get_base_id(loaded) == EVP_PKEY_RSA else {
            EVP_PKEY_free(loaded)
            throw ServiceAccountError(path: account.file, reason: "\"private_key\" is not an RSA key (service account keys sign RS256)")
        }
        guard EVP_PKEY_get_bits(loaded) >= 2048 else {
            EVP_PKEY_free(loaded)
            throw ServiceAccountError(path: account.file, reason: "\"private_key\" is an RSA key shorter than 2048 bits")
        }
        key = loaded
    }

    deinit { EVP_PKEY_free(key) }
}
