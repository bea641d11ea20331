import ProviderKit
import PushCore

/// A v1 app's bearer: an OAuth 2.0 access token from Huawei's token endpoint for the client-credentials grant,
/// held by an `AccessTokenCache` and shared by every lane of the app. The cache's own rules apply as they do for
/// every OAuth service: its renewal thread (the exchange blocks, so never on Swift's cooperative pool) asks again when 5 minutes
/// of the token's `expires_in` remain, at most one request at a time and a second apart (Huawei allows 1,000
/// tokens per app per 5 minutes), backs off while the endpoint fails, and drops a token a server rejected.
public enum HuaweiAccessTokens {
    /// The cache for `credentials`, asking `endpoint` (`huawei.token_uri`). Its thread starts at once and runs
    /// until the cache's `shutdown()`.
    /// - Parameters:
    ///   - name: what the cache's log lines and readiness call it (the app's topic).
    ///   - onExchange: told after each exchange whether it got a token (`push_provider_access_token_renewals_total{provider="huawei"}`).
    ///   - onChange: the cache's state changes (readiness), as `AccessTokenCache` has it.
    public static func cache(credentials: HuaweiClientCredentials, endpoint: TokenEndpoint, name: String,
                             refusedRetrySeconds: Double = 60, clock: any TransportClock = SystemTransportClock(),
                             onExchange: (@Sendable (_ granted: Bool) -> Void)? = nil,
                             onChange: (@Sendable (AccessTokenState) -> Void)? = nil) -> AccessTokenCache {
        AccessTokenCache(name: name, service: "Huawei", refusedRetrySeconds: refusedRetrySeconds, clock: clock, onChange: onChange) { stopping in
            let grant = exchange(credentials: credentials, endpoint: endpoint, abandon: stopping)
            if case .granted = grant { onExchange?(true) } else { onExchange?(false) }
            return grant
        }
    }

    /// One client-credentials exchange (blocking), Huawei's answer read by `HuaweiTokenAnswer`.
    public static func exchange(credentials: HuaweiClientCredentials, endpoint: TokenEndpoint,
                                abandon: @escaping @Sendable () -> Bool = { false }) -> TokenGrant {
        let uri = endpoint.uri
        return endpoint.exchange(form: credentials.grantForm, abandon: abandon) { status, body in
            HuaweiTokenAnswer.classify(status: status, body: body, clientID: credentials.clientID, uri: uri)
        }
    }
}
