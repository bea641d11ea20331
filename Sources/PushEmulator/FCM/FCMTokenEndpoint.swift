import COpenSSL
import Foundation

/// Google's OAuth 2.0 token endpoint as FCM clients meet it (`POST <token path>`, default `/token`): takes the
/// JWT-bearer grant, checks the RS256 assertion against the trusted service accounts' public keys and its
/// claims (`iss`, `aud`, `scope`, `iat`/`exp`), and answers an access token from `AccessTokenRegistry` or
/// Google's error, in Google's words.
final class FCMTokenEndpoint: @unchecked Sendable {
    // Immutable after init; EVP_PKEY verification is safe from several threads.
    private struct Account {
        let clientEmail: String
        let publicKey: OpaquePointer
    }

    static let grantType = "urn:ietf:params:oauth:grant-type:jwt-bearer"
    static let scope = "https://www.googleapis.com/auth/firebase.messaging"
    /// How far in the future an `iat` may be (Google tolerates a little skew).
    static let allowedSkewSeconds: Double = 60

    let path: String
    let registry: AccessTokenRegistry
    private let accounts: [String: Account]
    private let audience: String?

    init(configuration: EmulatorConfiguration, registry: AccessTokenRegistry) throws {
        path = configuration.fcmTokenPath
        audience = configuration.fcmTokenAudience
        self.registry = registry
        var loaded: [String: Account] = [:]
        for account in configuration.fcmServiceAccounts {
            let pkey = try RSAKeyFile.load(account.keyFile, owner: "service account key file")
            loaded[account.privateKeyID] = Account(clientEmail: account.clientEmail, publicKey: pkey)
        }
        accounts = loaded
    }

    deinit { accounts.values.forEach { EVP_PKEY_free($0.publicKey) } }

    /// The answer to one request to the token path: status and JSON body.
    func answer(_ request: IncomingRequest, now: Double = Date().timeIntervalSince1970) -> (status: Int, body: String) {
        guard registry.noteRequest() else {
            return (503, #"{"error":"temporarily_unavailable","error_description":"The token endpoint is down (emulator fault)."}"#)
        }
        guard request.method == "POST" else {
            return (405, #"{"error":"invalid_request","error_description":"Only POST is supported."}"#)
        }
        let form = FormFields.parse(request.body)
        guard form["grant_type"] == Self.grantType else {
            return refuse(400, "unsupported_grant_type", "Invalid grant_type: \(form["grant_type"] ?? "")")
        }
        guard let assertion = form["assertion"], !assertion.isEmpty else {
            return refuse(400, "invalid_request", "Missing required parameter: assertion")
        }
        switch verify(assertion, now: now, postedTo: request.header("host").map { "https://\($0)\(path)" }) {
        case .failure(let refusal):
            return refuse(400, refusal.error, refusal.description)
        case .success(let clientEmail):
            let (token, expiresIn) = registry.issue(clientEmail: clientEmail, now: now)
            return (200, #"{"access_token":"\#(token)","expires_in":\#(expiresIn),"token_type":"Bearer"}"#)
        }
    }

    private func refuse(_ status: Int, _ error: String, _ description: String) -> (status: Int, body: String) {
        registry.noteRefusal()
        return (status, #"{"error":"\#(error)","error_description":"\#(Self.jsonEscaped(description))"}"#)
    }

    struct Refusal: Error {
        let error: String
        let description: String
        init(_ description: String, error: String = "invalid_grant") {
            self.error = error
            self.description = description
        }
    }

    /// The assertion's `iss` when it holds, else Google's refusal. `postedTo` is the URL the request reached
    /// (`https://` + its `:authority` + the token path).
    func verify(_ assertion: String, now: Double, postedTo: String?) -> Result<String, Refusal> {
        guard let jws = CompactJWS(assertion) else { return .failure(Refusal("Invalid JWT: not a JWS compact serialization")) }
        let (header, claims) = (jws.header, jws.claims)
        guard header["alg"] as? String == "RS256" else { return .failure(Refusal("Invalid JWT: alg must be RS256")) }
        guard let keyID = header["kid"] as? String, let account = accounts[keyID] else {
            return .failure(Refusal("Invalid grant: account not found"))
        }
        guard Self.verifyRS256(signature: jws.signature, message: jws.signingInput, key: account.publicKey) else {
            return .failure(Refusal("Invalid JWT Signature."))
        }
        guard claims["iss"] as? String == account.clientEmail else {
            return .failure(Refusal("Invalid grant: account not found"))
        }
        guard let audience = claims["aud"] as? String, audienceMatches(audience, postedTo: postedTo) else {
            return .failure(Refusal("Invalid JWT: Failed audience check."))
        }
        guard let scope = claims["scope"] as? String, scope.split(separator: " ").contains(Substring(Self.scope)) else {
            return .failure(Refusal("Invalid OAuth scope or ID token audience provided.", error: "invalid_scope"))
        }
        guard let issuedAt = (claims["iat"] as? NSNumber)?.doubleValue, let expiry = (claims["exp"] as? NSNumber)?.doubleValue,
              issuedAt.isFinite, expiry.isFinite,
              issuedAt <= now + Self.allowedSkewSeconds, expiry > now, expiry > issuedAt, expiry - issuedAt <= 3600
        else {
            return .failure(Refusal("Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. "
                + "Check your iat and exp values in the JWT claim."))
        }
        return .success(account.clientEmail)
    }

    /// Google requires `aud` to be exactly the token endpoint's URL (`https://oauth2.googleapis.com/token`), no
    /// other spelling. Here: the configured audience exactly; without one, exactly the URL this request was posted
    /// to (the emulator is reached as 127.0.0.1, localhost or a container name, so that URL is the only
    /// spelling a client can know). A request without `:authority` can match only a configured audience.
    private func audienceMatches(_ audience: String, postedTo: String?) -> Bool {
        if let expected = self.audience { return audience == expected }
        return postedTo.map { audience == $0 } ?? false
    }

    private static func verifyRS256(signature: [UInt8], message: [UInt8], key: OpaquePointer) -> Bool {
        guard let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, key) == 1 else {
            ERR_clear_error()
            return false
        }
        let verified = EVP_DigestVerify(context, signature, signature.count, message, message.count) == 1
        ERR_clear_error()
        return verified
    }

    /// Enough for the texts above and a client's echoed `grant_type`: quotes and backslashes escaped,
    /// control characters dropped.
    static func jsonEscaped(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.filter { $0.value >= 0x20 }))
            .replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
    }
}
