import ProviderKit
import PushCore

/// Where a Huawei app's bearer comes from, which also says the API: v1's OAuth access token (an
/// `AccessTokenCache` for the client-credentials grant) or v3's self-signed JWT (`HuaweiJWTSigner`). One per app,
/// shared by its lanes.
public enum HuaweiCredential: Sendable {
    case clientCredentials(AccessTokenCache)
    case serviceAccount(HuaweiJWTSigner)

    public var api: HuaweiAPI {
        switch self {
        case .clientCredentials: return .v1
        case .serviceAccount: return .v3
        }
    }

    /// The credential `app` names, loaded and started: v1 reads the client secret and starts the access token's
    /// renewal thread (stop it with the cache's `shutdown()`); v3 reads the key file and signs once to prove the key.
    /// A file that is missing, malformed or cannot sign is an error naming it (a startup error, not a paused app).
    public static func make(for app: HuaweiApp, settings: HuaweiSettings,
                            onExchange: (@Sendable (_ granted: Bool) -> Void)? = nil,
                            onChange: (@Sendable (AccessTokenState) -> Void)? = nil) throws(HuaweiCredentialError) -> HuaweiCredential {
        switch app.api {
        case .v1:
            if let problem = TokenURI.problem(settings.tokenURI) {
                throw HuaweiCredentialError(file: app.clientSecretFile, reason: "huawei.token_uri \(problem)")
            }
            let credentials = try HuaweiClientCredentials.load(clientID: app.appID, secretFile: app.clientSecretFile)
            let endpoint = TokenEndpoint(uri: settings.tokenURI, caFile: settings.caFile, timeoutMillis: settings.requestTimeoutMillis)
            return .clientCredentials(HuaweiAccessTokens.cache(credentials: credentials, endpoint: endpoint, name: app.topic,
                                                               onExchange: onExchange, onChange: onChange))
        case .v3:
            let account = try HuaweiServiceAccount.load(path: app.serviceAccountFile)
            let signer = try HuaweiJWTSigner(account: account, defaultAudience: settings.tokenURI)
            do {
                _ = try signer.current()
            } catch {
                throw HuaweiCredentialError(file: app.serviceAccountFile, reason: error.description)
            }
            return .serviceAccount(signer)
        }
    }

    /// The bearer for a pass of requests, read without waiting for any I/O.
    func authorization() -> Authorization {
        switch self {
        case .clientCredentials(let cache):
            switch cache.state {
            case .ready(let token): return .bearer(token.bearer.value, generation: token.generation)
            case .unavailable(let reason): return .wait(reason: reason)
            case .refused(let reason): return .refused(reason: "AccessTokenRefused: \(reason)")
            }
        case .serviceAccount(let signer):
            do {
                let (jwt, generation) = try signer.current()
                return .bearer(jwt.value, generation: generation)
            } catch {
                return .refused(reason: "JWTSigningFailed: \(error.description)")
            }
        }
    }

    /// A server rejected the bearer of `generation`: a new one (the cache's rules: not sooner than a second after
    /// its last request; the signer: signed at the next read).
    func renew(generation: Int) {
        switch self {
        case .clientCredentials(let cache): cache.rejected(generation: generation)
        case .serviceAccount(let signer): signer.renew(generation: generation)
        }
    }

    /// The bearer in use now was rejected (a probe, the only request out while the app is paused): a new one.
    func renewCurrent() {
        switch self {
        case .clientCredentials(let cache):
            if let generation = cache.state.token?.generation { cache.rejected(generation: generation) }
        case .serviceAccount(let signer):
            signer.renew(generation: signer.generation)
        }
    }
}
