import COpenSSL
import Foundation
import PushCore
import TLSClient

public enum CredentialError: Error, CustomStringConvertible, Equatable {
    case unreadableKey(path: String, reason: String)
    case signingFailed(String)
    case unreadableCertificate(path: String, reason: String)

    public var description: String {
        switch self {
        case .unreadableKey(let path, let reason): return "APNs key \(path): \(reason)"
        case .signingFailed(let reason): return "JWT signing failed: \(reason)"
        case .unreadableCertificate(let path, let reason): return "APNs certificate \(path): \(reason)"
        }
    }
}

/// ES256 signing with the P-256 key of an APNs `.p8` file, through OpenSSL. The key pointer never
/// leaves this type.
public final class JWTSigner: @unchecked Sendable {
    // Immutable after init; OpenSSL allows concurrent signing with one EVP_PKEY.
    private let key: OpaquePointer
    public let keyID: String
    public let teamID: String

    public init(keyFile: String, keyID: String, teamID: String) throws {
        guard let pem = FileManager.default.contents(atPath: keyFile) else {
            throw CredentialError.unreadableKey(path: keyFile, reason: "file not found or not readable")
        }
        // Apple issues .p8 keys unencrypted and no password is configured for one: an encrypted key is refused
        // (never a prompt on the terminal) with a reason that says so.
        let loaded: OpaquePointer
        switch PEMPrivateKey.read(pem: Array(pem)) {
        case .success(let key): loaded = key
        case .failure(let failure):
            ERR_clear_error()
            throw CredentialError.unreadableKey(path: keyFile, reason: failure == .unreadable
                ? "not a PEM private key (expected Apple's .p8 file)"
                : "encrypted key: no password configured (Apple's .p8 keys are not encrypted; `openssl pkey -in FILE -out NEW.p8` writes it decrypted)")
        }
        guard EVP_PKEY_get_base_id(loaded) == EVP_PKEY_EC, EVP_PKEY_get_bits(loaded) == 256 else {
            EVP_PKEY_free(loaded)
            throw CredentialError.unreadableKey(path: keyFile, reason: "not a P-256 EC key (APNs keys are ES256)")
        }
        key = loaded
        self.keyID = keyID
        self.teamID = teamID
    }

    deinit { EVP_PKEY_free(key) }

    /// A provider token: `base64url(header).base64url(claims).base64url(r||s)`.
    public func token(issuedAt: Int64) throws -> String {
        let header = Base64URL.encode(Array("{\"alg\":\"ES256\",\"kid\":\"\(keyID)\"}".utf8))
        let claims = Base64URL.encode(Array("{\"iss\":\"\(teamID)\",\"iat\":\(issuedAt)}".utf8))
        let signingInput = "\(header).\(claims)"
        let signature = try sign(Array(signingInput.utf8))
        return "\(signingInput).\(Base64URL.encode(signature))"
    }

    /// ECDSA-SHA256; JWS wants the raw 64-byte r||s, OpenSSL gives DER, so it is converted.
    private func sign(_ message: [UInt8]) throws -> [UInt8] {
        guard let context = EVP_MD_CTX_new() else { throw CredentialError.signingFailed("no digest context") }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestSignInit(context, nil, EVP_sha256(), nil, key) == 1 else {
            throw CredentialError.signingFailed("EVP_DigestSignInit")
        }
        var length = 0
        guard EVP_DigestSign(context, nil, &length, message, message.count) == 1 else {
            throw CredentialError.signingFailed("EVP_DigestSign (size)")
        }
        var der = [UInt8](repeating: 0, count: length)
        guard EVP_DigestSign(context, &der, &length, message, message.count) == 1 else {
            throw CredentialError.signingFailed("EVP_DigestSign")
        }
        return try der.withUnsafeBufferPointer { buffer -> [UInt8] in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            guard let signature = d2i_ECDSA_SIG(nil, &cursor, length) else {
                throw CredentialError.signingFailed("cannot decode the DER signature")
            }
            defer { ECDSA_SIG_free(signature) }
            var raw = [UInt8](repeating: 0, count: 64)
            guard let r = ECDSA_SIG_get0_r(signature), let s = ECDSA_SIG_get0_s(signature),
                  raw.withUnsafeMutableBufferPointer({ out in
                      BN_bn2binpad(r, out.baseAddress, 32) == 32 && BN_bn2binpad(s, out.baseAddress! + 32, 32) == 32
                  })
            else { throw CredentialError.signingFailed("cannot extract r and s") }
            return raw
        }
    }
}
