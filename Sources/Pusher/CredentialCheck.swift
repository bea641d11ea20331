import PushCore

/// Loads an app's credential exactly as the worker does, for `worker check-config`: a .p8 key is read
/// and used to sign a JWT (which is thrown away, never shown); a certificate is opened with its password;
/// an FCM service account file is read, its key signs an assertion, and the token endpoint is asked for an
/// access token (what `invalid_grant`, a clock off by minutes or a deleted key look like, before a deploy).
public enum CredentialCheck {
    /// What was verified, in a few words; throws `CredentialError` naming the file and the problem.
    public static func verify(_ app: APNsApp) throws -> String {
        switch app.credential {
        case .token(let teamID, let keyID, let keyFile):
            let signer = try JWTSigner(keyFile: keyFile, keyID: keyID, teamID: teamID)
            _ = try signer.token(issuedAt: WallClock.nowSeconds())
            return "key \(keyFile) loaded, JWT signed"
        case .certificate(let file, let password):
            try ClientCertificate.validate(file: file, password: password.value)
            return "certificate \(file) loaded"
        }
    }

    /// An FCM app: its service account loaded, an RS256 assertion signed, and one access token asked for.
    public static func verify(_ app: FCMApp, fcm: FCMSettings) throws -> String {
        let account = try ServiceAccount.load(path: app.serviceAccountFile)
        let source = try AccessTokenSource(account: account, fcm: fcm, timeoutMillis: min(fcm.requestTimeoutMillis, 10_000))
        let assertion = try source.signer.assertion(issuedAt: WallClock.nowSeconds())  // a key that cannot sign throws here
        let project = app.projectID.isEmpty ? account.projectID : app.projectID
        let endpoint = source.endpoint
        switch endpoint.exchange(assertion: assertion) {
        case .granted(_, let expiresIn):
            return "service account \(account.clientEmail) (project \(project)) loaded, assertion signed, access token granted by \(endpoint.uri) (expires in \(expiresIn) s)"
        case .unavailable(let reason):
            throw CredentialError.noAccessToken(path: app.serviceAccountFile, reason: "no access token from \(endpoint.uri): \(reason)")
        case .refused(let reason):
            throw CredentialError.noAccessToken(path: app.serviceAccountFile, reason: "the token endpoint \(endpoint.uri) refuses this service account: \(reason) (invalid_grant usually means this machine's clock is off, or the key was deleted)")
        }
    }
}
