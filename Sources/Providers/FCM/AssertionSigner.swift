import COpenSSL
import Foundation
import PushCore

/// The JWT a service account presents to Google's token endpoint (the JWT-bearer grant, RFC 7523):
/// RS256 (RSA PKCS#1 v1.5 with SHA-256, not the ES256 of Apple's tokens), `kid` = `private_key_id`, claims `iss`,
/// `scope`, `aud`, `iat` and `exp` = `iat` + 3600 (Google's maximum). The key stays inside the `RSAKey`.
public final class AssertionSigner: Sendable, CustomStringConvertible {
    public static let messagingScope = "https://www.googleapis.com/auth/firebase.messaging"
    /// Google refuses assertions that live longer than an hour.
    public static let lifetimeSeconds: Int64 = 3600

    public let clientEmail: String
    public let privateKeyID: String
    /// The `aud` claim: the token endpoint the assertion is posted to.
    public let audience: String
    private let key: RSAKey

    /// - Parameter audience: where the assertion is posted (`fcm.token_uri`); the account's `token_uri` when nil.
    public init(account: ServiceAccount, audience: String? = nil) throws(ServiceAccountError) {
        key = try RSAKey(account: account)
        clientEmail = account.clientEmail
        privateKeyID = account.privateKeyID
        self.audience = audience.flatMap { $0.isEmpty ? nil : $0 } ?? account.tokenURI
    }

    public var description: String { "AssertionSigner(\(clientEmail), key \(privateKeyID), aud \(audience))" }

    /// `base64url(header).base64url(claims).base64url(signature)`, issued at `issuedAt` (Unix seconds).
    public func assertion(issuedAt: Int64) throws -> String {
        let header = JSONValue.object([
            JSONMember(key: "alg", value: .string("RS256")),
            JSONMember(key: "typ", value: .string("JWT")),
            JSONMember(key: "kid", value: .string(privateKeyID)),
        ])
        // Saturating: a clock near Int64's end must not trap.
        let (sum, overflow) = issuedAt.addingReportingOverflow(Self.lifetimeSeconds)
        let expiry = overflow ? Int64.max : sum
        let claims = JSONValue.object([
            JSONMember(key: "iss", value: .string(clientEmail)),
            JSONMember(key: "scope", value: .string(Self.messagingScope)),
            JSONMember(key: "aud", value: .string(audience)),
            JSONMember(key: "iat", value: .number(String(issuedAt))),
            JSONMember(key: "exp", value: .number(String(expiry))),
        ])
        let signingInput = Base64URL.encode(JSONWriter.canonical(header)) + "." + Base64URL.encode(JSONWriter.canonical(claims))
        return signingInput + "." + Base64URL.encode(try sign(Array(signingInput.utf8)))
    }

    /// RSASSA-PKCS1-v1_5 over SHA-256 (OpenSSL's default padding for an RSA key with EVP_DigestSign).
    private func sign(_ message: [UInt8]) throws -> [UInt8] {
        guard let context = EVP_MD_CTX_new() else { throw AssertionSigningFailed(step: "no digest context") }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestSignInit(context, nil, EVP_sha256(), nil, key.key) == 1 else {
            ERR_clear_error()
            throw AssertionSigningFailed(step: "EVP_DigestSignInit (RS256)")
        }
        var length = 0
        guard EVP_DigestSign(context, nil, &length, message, message.count) == 1 else {
            ERR_clear_error()
            throw AssertionSigningFailed(step: "EVP_DigestSign (size)")
        }
        var signature = [UInt8](repeating: 0, count: length)
        guard EVP_DigestSign(context, &signature, &length, message, message.count) == 1 else {
            ERR_clear_error()
            throw AssertionSigningFailed(step: "EVP_DigestSign (RS256)")
        }
        return Array(signature.prefix(length))
    }
}

/// OpenSSL could not sign an assertion (it says the same words as any JWT signer of the worker).
struct AssertionSigningFailed: Error, CustomStringConvertible {
    let step: String
    var description: String { "JWT signing failed: \(step)" }
}
