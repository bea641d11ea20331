import COpenSSL
import PushCore
import TLSClient

/// An RSA private key that signs PS256 (RFC 7518 section 3.5: RSASSA-PSS with SHA-256, MGF1 with SHA-256 and a
/// salt as long as the digest, 32 bytes), through OpenSSL's EVP API. The thin wrapper of this module's C interop:
/// the EVP_PKEY pointer never leaves it, and OpenSSL's error queue is cleared, never logged (it could quote the
/// key).
final class PS256Key: @unchecked Sendable {
    // Immutable after init; OpenSSL allows concurrent signing with one EVP_PKEY.
    private let key: OpaquePointer

    /// Loads a PKCS#8 PEM RSA key of at least 2048 bits; `file` names it in errors.
    init(pem: Secret, file: String) throws(HuaweiCredentialError) {
        // Huawei issues the key unencrypted and no password is configured for one: an encrypted key is refused
        // (never a prompt on the terminal) with a reason that says so.
        let read = PEMPrivateKey.read(pem: Array(pem.value.utf8))
        ERR_clear_error()
        let loaded: OpaquePointer
        switch read {
        case .success(let key): loaded = key
        case .failure(.unreadable):
            throw HuaweiCredentialError(file: file, reason: "\"private_key\" is not a PEM private key (expected \"-----BEGIN PRIVATE KEY-----\", PKCS#8)")
        case .failure:
            throw HuaweiCredentialError(file: file, reason: "\"private_key\" is an encrypted key: no password configured (Huawei's keys are not encrypted; download a new key)")
        }
        guard EVP_PKEY_get_base_id(loaded) == EVP_PKEY_RSA else {
            EVP_PKEY_free(loaded)
            throw HuaweiCredentialError(file: file, reason: "\"private_key\" is not an RSA key (Huawei's JWTs are signed PS256)")
        }
        guard EVP_PKEY_get_bits(loaded) >= 2048 else {
            EVP_PKEY_free(loaded)
            throw HuaweiCredentialError(file: file, reason: "\"private_key\" is an RSA key shorter than 2048 bits")
        }
        key = loaded
    }

    deinit { EVP_PKEY_free(key) }

    /// The PS256 signature of `message`. PSS is randomized: two signatures of one message differ, both valid.
    func sign(_ message: [UInt8]) throws(HuaweiSigningError) -> [UInt8] {
        defer { ERR_clear_error() }
        guard let context = EVP_MD_CTX_new() else { throw HuaweiSigningError("no digest context") }
        defer { EVP_MD_CTX_free(context) }
        var keyContext: OpaquePointer?
        guard EVP_DigestSignInit(context, &keyContext, EVP_sha256(), nil, key) == 1 else {
            throw HuaweiSigningError("EVP_DigestSignInit (PS256)")
        }
        // The key context belongs to the digest context; its padding, MGF1 digest (SHA-256 by default, set anyway)
        // and salt length make the signature PSS rather than PKCS#1 v1.5.
        guard EVP_PKEY_CTX_set_rsa_padding(keyContext, RSA_PKCS1_PSS_PADDING) == 1,
              EVP_PKEY_CTX_set_rsa_mgf1_md(keyContext, EVP_sha256()) == 1,
              EVP_PKEY_CTX_set_rsa_pss_saltlen(keyContext, RSA_PSS_SALTLEN_DIGEST) == 1 else {
            throw HuaweiSigningError("RSA-PSS parameters")
        }
        var length = 0
        guard EVP_DigestSign(context, nil, &length, message, message.count) == 1 else {
            throw HuaweiSigningError("EVP_DigestSign (size)")
        }
        var signature = [UInt8](repeating: 0, count: length)
        guard EVP_DigestSign(context, &signature, &length, message, message.count) == 1 else {
            throw HuaweiSigningError("EVP_DigestSign (PS256)")
        }
        return Array(signature.prefix(length))
    }
}

/// A signature OpenSSL would not make (nothing of the key in it).
public struct HuaweiSigningError: Error, CustomStringConvertible, Equatable {
    public let step: String
    init(_ step: String) { self.step = step }
    public var description: String { "PS256 signing failed: \(step)" }
}
