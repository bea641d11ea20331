import COpenSSL
import Foundation

/// The JWT a Push Kit v3 sender signs itself (HarmonyOS 5+ has no token exchange): header
/// `{"kid":key_id,"typ":"JWT","alg":"PS256"}`, claims `iss` = the account's `sub_account`, `aud` = Huawei's token
/// URL, `iat`, `exp`; RSASSA-PSS with SHA-256 and a 32-byte salt (RFC 7518's PS256) by the account's private key.
/// Refusals in Huawei's codes: 80200001 (not a JWT, unknown `kid`, bad signature, wrong `iss`/`aud`/project),
/// 80200005 (expired), 80300036 (valid for over a day).
final class HuaweiJWTVerifier: @unchecked Sendable {
    // Immutable after init; EVP_PKEY verification is safe from several threads.
    private struct Account {
        let settings: EmulatorConfiguration.HuaweiServiceAccount
        let publicKey: OpaquePointer
    }

    /// How far in the future an `iat` may be.
    static let allowedSkewSeconds: Double = 60
    static let longestValiditySeconds: Double = 86_400

    private let accounts: [String: Account]
    private let audience: String
    private let tokenPaths: [String]

    init(settings: EmulatorConfiguration.HuaweiSettings) throws {
        audience = settings.jwtAudience
        tokenPaths = settings.tokenPaths
        var loaded: [String: Account] = [:]
        for account in settings.serviceAccounts {
            loaded[account.keyID] = Account(settings: account, publicKey: try Self.loadRSAKey(account.keyFile))
        }
        accounts = loaded
    }

    deinit { accounts.values.forEach { EVP_PKEY_free($0.publicKey) } }

    /// The account when the JWT holds for `project` at `now`; `authority` is the request's `:authority` (Host)
    /// (the emulator's own token URL there is accepted as `aud` besides Huawei's).
    func verify(_ jwt: String, project: String, now: Double, authority: String?) -> Result<EmulatorConfiguration.HuaweiServiceAccount, HuaweiRefusal> {
        guard let jws = CompactJWS(jwt) else { return .failure(HuaweiRefusal("80200001", "The bearer is not a JSON Web Token (v3 takes no OAuth access token).")) }
        let (header, claims) = (jws.header, jws.claims)
        guard header["alg"] as? String == "PS256" else { return .failure(HuaweiRefusal("80200001", "The JWT's alg must be PS256.")) }
        guard let keyID = header["kid"] as? String, let account = accounts[keyID] else {
            return .failure(HuaweiRefusal("80200001", "The JWT's kid names no service account key."))
        }
        guard Self.verifyPS256(signature: jws.signature, message: jws.signingInput, key: account.publicKey) else {
            return .failure(HuaweiRefusal("80200001", "The JWT's PS256 signature does not verify."))
        }
        guard claims["iss"] as? String == account.settings.subAccount else {
            return .failure(HuaweiRefusal("80200001", "The JWT's iss must be the key's sub_account."))
        }
        let audiences = (claims["aud"] as? String).map { [$0] } ?? (claims["aud"] as? [String] ?? [])
        let accepted = [audience] + tokenPaths.compactMap { path in authority.map { "https://\($0)\(path)" } }
        guard audiences.contains(where: accepted.contains) else {
            return .failure(HuaweiRefusal("80200001", "The JWT's aud must be \(audience)."))
        }
        guard account.settings.projectID == project else {
            return .failure(HuaweiRefusal("80200001", "The key belongs to project \(account.settings.projectID), not \(project)."))
        }
        guard let issuedAt = (claims["iat"] as? NSNumber)?.doubleValue, let expiry = (claims["exp"] as? NSNumber)?.doubleValue,
              issuedAt.isFinite, expiry.isFinite, expiry > issuedAt
        else { return .failure(HuaweiRefusal("80200001", "The JWT needs numeric iat and exp, exp after iat.")) }
        guard issuedAt <= now + Self.allowedSkewSeconds else {
            return .failure(HuaweiRefusal("80200001", "The JWT's iat is in the future."))
        }
        guard expiry - issuedAt <= Self.longestValiditySeconds else { return .failure(HuaweiRefusal("80300036")) }
        guard expiry > now else { return .failure(HuaweiRefusal("80200005")) }
        return .success(account.settings)
    }

    /// RSASSA-PSS, SHA-256, MGF1-SHA-256, salt = digest length: PS256 exactly (a signature with another salt
    /// length is refused, as a strict verifier does).
    static func verifyPS256(signature: [UInt8], message: [UInt8], key: OpaquePointer) -> Bool {
        guard let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        var keyContext: OpaquePointer?
        guard EVP_DigestVerifyInit(context, &keyContext, EVP_sha256(), nil, key) == 1,
              EVP_PKEY_CTX_set_rsa_padding(keyContext, RSA_PKCS1_PSS_PADDING) == 1,
              EVP_PKEY_CTX_set_rsa_pss_saltlen(keyContext, RSA_PSS_SALTLEN_DIGEST) == 1
        else {
            ERR_clear_error()
            return false
        }
        let verified = EVP_DigestVerify(context, signature, signature.count, message, message.count) == 1
        ERR_clear_error()
        return verified
    }

    /// An RSA key from a PEM file (private or public) or a key JSON file's `private_key`.
    static func loadRSAKey(_ path: String) throws -> OpaquePointer {
        try RSAKeyFile.load(path, owner: "Huawei service account key file")
    }
}
