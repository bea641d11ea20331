import ProviderKit
import PushCore

/// A service account that loads and signs, but gets no access token (`worker check-config`).
public struct FCMCredentialError: Error, CustomStringConvertible, Equatable {
    public let path: String
    public let reason: String

    public var description: String { "FCM service account \(path): \(reason)" }
}

/// Loads an FCM app's credential exactly as the lanes do, for `worker check-config`: the service account file is
/// read, its key signs an assertion, and the token endpoint is asked for an access token.
enum FCMCredentialCheck {
    /// What was verified, in a few words; throws naming the file and the problem.
    static func verify(_ app: FCMApp, fcm: FCMSettings) throws -> String {
        let account = try ServiceAccount.load(path: app.serviceAccountFile)
        let source = try AccessTokenSource(account: account, fcm: fcm, timeoutMillis: min(fcm.requestTimeoutMillis, 10_000))
        let assertion = try source.signer.assertion(issuedAt: WallClock.nowSeconds())  // a key that cannot sign throws here
        let project = app.projectID.isEmpty ? account.projectID : app.projectID
        let endpoint = source.endpoint
        switch endpoint.exchange(assertion: assertion) {
        case .granted(_, let expiresIn):
            return "service account \(account.clientEmail) (project \(project)) loaded, assertion signed, access token granted by \(endpoint.uri) (expires in \(expiresIn) s)"
        case .unavailable(let reason):
            throw FCMCredentialError(path: app.serviceAccountFile, reason: "no access token from \(endpoint.uri): \(reason)")
        case .refused(let reason):
            throw FCMCredentialError(path: app.serviceAccountFile, reason: "the token endpoint \(endpoint.uri) refuses this service account: \(reason) (invalid_grant usually means this machine's clock is off, or the key was deleted)")
        }
    }
}
