import FCMProvider
import PushEmulator
import Foundation

/// A Google service account for tests: a fresh 2048-bit RSA key (`openssl genpkey`, PKCS#8 PEM) in a temporary
/// directory, and the JSON key file the Firebase console would give for it, pointing at a token endpoint.
public struct ServiceAccountFixture: Sendable {
    public static let clientEmail = "push-worker@example-project.iam.gserviceaccount.com"
    public static let projectID = "example-project"

    public let directory: String
    public let keyFile: String
    public let privateKeyID: String
    public let clientEmail: String

    public init(privateKeyID: String = "0123456789abcdef0123456789abcdef01234567", clientEmail: String = ServiceAccountFixture.clientEmail) throws {
        directory = makeTemporaryDirectory("fcm-account")
        keyFile = directory + "/service-account-key.pem"
        let result = try runCommand(which("openssl") ?? "/usr/bin/openssl", [
            "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", keyFile,
        ])
        guard result.status == 0 else { throw TestSetupError("openssl genpkey failed: \(result.output)") }
        self.privateKeyID = privateKeyID
        self.clientEmail = clientEmail
    }

    /// The PEM text of the private key (tests look for it where it must not be).
    public var privateKeyPEM: String { (try? String(contentsOfFile: keyFile, encoding: .utf8)) ?? "" }

    /// What the emulator's token endpoint must trust for this account.
    public var trusted: EmulatorConfiguration.ServiceAccountKey {
        .init(clientEmail: clientEmail, privateKeyID: privateKeyID, keyFile: keyFile)
    }

    /// Writes the account's JSON key file (with `tokenURI`) and returns its path; `edit` changes fields first.
    @discardableResult
    public func writeJSON(tokenURI: String, name: String = "service-account.json",
                          edit: (inout [String: Any]) -> Void = { _ in }) throws -> String {
        var fields: [String: Any] = [
            "type": "service_account", "project_id": Self.projectID, "private_key_id": privateKeyID,
            "private_key": privateKeyPEM, "client_email": clientEmail, "client_id": "123456789012345678901",
            "auth_uri": "https://accounts.google.com/o/oauth2/auth", "token_uri": tokenURI,
        ]
        edit(&fields)
        let path = directory + "/" + name
        try JSONSerialization.data(withJSONObject: fields, options: [.prettyPrinted]).write(to: URL(fileURLWithPath: path))
        return path
    }
}
