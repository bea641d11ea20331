import ProviderKit
import PushCore

/// Where a service account gets its access tokens: the assertion it signs (RS256 with its key) and the endpoint
/// that exchanges it, `fcm.token_uri` when set, else the file's `token_uri`. One place for the worker's lanes
/// (`FCMLanes`) and for `check-config` (`CredentialCheck`), so both ask exactly the same way.
struct AccessTokenSource: Sendable {
    let signer: AssertionSigner
    let endpoint: TokenEndpoint

    init(account: ServiceAccount, fcm: FCMSettings, timeoutMillis: Int) throws {
        signer = try AssertionSigner(account: account, audience: fcm.tokenURI.isEmpty ? nil : fcm.tokenURI)
        endpoint = TokenEndpoint(uri: fcm.tokenURI.isEmpty ? account.tokenURI : fcm.tokenURI, caFile: fcm.caFile,
                                 timeoutMillis: timeoutMillis)
    }

    /// Signs an assertion now and exchanges it; a key that cannot sign is a refusal (nothing to retry).
    func exchange(abandon: @escaping @Sendable () -> Bool = { false }) -> TokenGrant {
        endpoint.exchange(signedBy: signer, abandon: abandon)
    }
}
