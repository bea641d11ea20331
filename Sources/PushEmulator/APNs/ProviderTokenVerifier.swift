import COpenSSL
import Foundation

/// Checks APNs provider tokens (ES256 JWTs) against the configured keys, with OpenSSL.
final class ProviderTokenVerifier: @unchecked Sendable {
    // Immutable after init; EVP_PKEY verification is safe from several threads.
    struct Key {
        let teamID: String
        let publicKey: OpaquePointer
    }

    private let keys: [String: Key]

    struct Claims: Equatable {
        let keyID: String
        let teamID: String
        let issuedAt: Int64
    }

    enum Failure: Error, Equatable {
        /// 403 InvalidProviderToken, with why (for logs and stats).
        case invalid(String)
    }

    init(keys: [EmulatorConfiguration.ProviderKey]) throws {
        var loaded: [String: Key] = [:]
        for key in keys {
            guard let pem = FileManager.default.contents(atPath: key.keyFile) else {
                throw EmulatorError.configuration("key file \(key.keyFile) cannot be read")
            }
            let pkey: OpaquePointer? = pem.withUnsafeBytes { raw in
                guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
                defer { BIO_free(bio) }
                if let privateKey = PEM_read_bio_PrivateKey(bio, nil, nil, nil) { return privateKey }
                _ = BIO_ctrl(bio, BIO_CTRL_RESET, 0, nil)
                return PEM_read_bio_PUBKEY(bio, nil, nil, nil)
            }
            guard let pkey else { throw EmulatorError.configuration("key file \(key.keyFile) holds no PEM EC key") }
            loaded[key.keyID] = Key(teamID: key.teamID, publicKey: pkey)
        }
        self.keys = loaded
    }

    deinit { keys.values.forEach { EVP_PKEY_free($0.publicKey) } }

    /// Decodes and verifies `token`; the age rule is the caller's (it depends on the clock and the connection).
    func verify(_ token: String) throws -> Claims {
        guard let jws = CompactJWS(token) else { throw Failure.invalid("not a JWT") }
        let (header, claims, signature) = (jws.header, jws.claims, jws.signature)
        guard header["alg"] as? String == "ES256" else { throw Failure.invalid("alg is not ES256") }
        guard let keyID = header["kid"] as? String else { throw Failure.invalid("no kid") }
        guard let key = keys[keyID] else { throw Failure.invalid("unknown kid \(keyID)") }
        guard let issuer = claims["iss"] as? String, issuer == key.teamID else { throw Failure.invalid("iss is not the key's team") }
        guard let issuedAt = (claims["iat"] as? NSNumber)?.int64Value else { throw Failure.invalid("no iat") }
        guard signature.count == 64,
              Self.verifyES256(signature: signature, message: jws.signingInput, key: key.publicKey)
        else { throw Failure.invalid("bad signature") }
        return Claims(keyID: keyID, teamID: issuer, issuedAt: issuedAt)
    }

    private static func verifyES256(signature: [UInt8], message: [UInt8], key: OpaquePointer) -> Bool {
        guard let sig = ECDSA_SIG_new() else { return false }
        defer { ECDSA_SIG_free(sig) }
        guard let r = BN_bin2bn(signature, 32, nil), let s = BN_bin2bn(Array(signature[32...]), 32, nil) else { return false }
        ECDSA_SIG_set0(sig, r, s)
        var der: UnsafeMutablePointer<UInt8>?
        let length = i2d_ECDSA_SIG(sig, &der)
        guard length > 0, let der else { return false }
        defer { CRYPTO_free(der, #file, #line) }
        guard let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, key) == 1 else { return false }
        return EVP_DigestVerify(context, der, Int(length), message, message.count) == 1
    }
}
