import ProviderKit
import PushCore

extension TokenEndpoint {
    /// Signs an assertion with `signer` now and exchanges it; a key that cannot sign is a refusal (nothing to retry).
    public func exchange(signedBy signer: AssertionSigner, abandon: @escaping @Sendable () -> Bool = { false }) -> TokenGrant {
        do {
            return exchange(assertion: try signer.assertion(issuedAt: WallClock.nowSeconds()), abandon: abandon)
        } catch {
            return .refused(reason: "cannot sign the assertion: \(error)")
        }
    }
}

extension AccessTokenCache {
    /// The usual cache of a service account: `signer`'s assertions posted to `endpoint`.
    public convenience init(signer: AssertionSigner, endpoint: TokenEndpoint, name: String? = nil,
                            refusedRetrySeconds: Double = 60, onChange: (@Sendable (AccessTokenState) -> Void)? = nil) {
        self.init(name: name ?? signer.clientEmail, service: "FCM", refusedRetrySeconds: refusedRetrySeconds, onChange: onChange) { stopping in
            endpoint.exchange(signedBy: signer, abandon: stopping)
        }
    }
}
