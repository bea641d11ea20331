import PushCore

/// Loads an APNs app's credential exactly as the worker does, for `worker check-config`: a .p8 key is read
/// and used to sign a JWT (which is thrown away, never shown); a certificate is opened with its password. (A
/// provider checks its own: `ProviderApps.checkCredentials`; this is APNs's.)
public enum APNsCredentialCheck {
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
}
