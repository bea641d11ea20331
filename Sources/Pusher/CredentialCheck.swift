import PushCore
import Synchronization

/// Loads an app's credential exactly as the worker does, for `worker check-config`: a .p8 key is read
/// and used to sign a JWT (which is thrown away, never shown); a certificate is opened with its password.
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
}

/// Whether APNs currently refuses one credential (InvalidProviderToken, BadCertificate, ...), shared by the
/// transport lanes of that credential: one lane's success clears what another lane's refusal set.
public final class CredentialState: Sendable {
    let refused = Atomic<Bool>(false)
    /// Lanes of the credential currently paused (`CredentialPause`): the app's gauge is 1 while any is.
    let pausedLanes = Atomic<Int>(0)
    public init() {}
}
