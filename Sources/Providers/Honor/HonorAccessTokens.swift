import ProviderKit
import PushCore

/// An Honor app's bearer: an OAuth 2.0 access token for the client-credentials grant at `honor.token_uri`, held by
/// an `AccessTokenCache` (renewed when 5 minutes of its `expires_in` remain, one request at a time, backing off
/// while the endpoint fails) and shared by every lane of the app. Honor's answers are read as RFC 6749 has them:
/// its token endpoint's error codes are not published.
public enum HonorAccessTokens {
    public static func cache(credentials: ClientCredentials, endpoint: TokenEndpoint, name: String,
                             clock: any TransportClock = SystemTransportClock(),
                             onExchange: (@Sendable (_ granted: Bool) -> Void)? = nil,
                             onChange: (@Sendable (AccessTokenState) -> Void)? = nil) -> AccessTokenCache {
        AccessTokenCache(name: name, service: "Honor", clock: clock, onChange: onChange) { stopping in
            let grant = endpoint.exchange(form: credentials.grantForm, abandon: stopping)
            if case .granted = grant { onExchange?(true) } else { onExchange?(false) }
            return grant
        }
    }
}
