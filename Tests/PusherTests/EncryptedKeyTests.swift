@testable import APNsProvider
@testable import FCMProvider
import Foundation
import PushCore
import Pusher
import TestSupport
import XCTest

/// An encrypted PEM key is refused with an error naming the file, never answered by OpenSSL's default password
/// callback, which prompts on the terminal (or reads standard input) for the pass phrase. The keys are encrypted
/// here with the openssl command line, as an operator's would be.
final class EncryptedKeyTests: XCTestCase {
    var directory: String!

    override func setUp() {
        directory = makeTemporaryDirectory("encrypted-keys")
    }

    /// `key` encrypted with AES-256 under `password` (PKCS#8, "BEGIN ENCRYPTED PRIVATE KEY"), as a new file.
    private func encrypted(_ key: String, password: String) throws -> String {
        let path = key + ".encrypted"
        let result = try runCommand(which("openssl") ?? "/usr/bin/openssl",
                                    ["pkey", "-in", key, "-aes256", "-passout", "pass:\(password)", "-out", path])
        guard result.status == 0 else { throw TestSetupError("openssl pkey failed: \(result.output)") }
        XCTAssertTrue(try String(contentsOfFile: path, encoding: .utf8).contains("ENCRYPTED PRIVATE KEY"))
        return path
    }

    func testAnEncryptedP8KeyIsAClearError() throws {
        let file = try encrypted(try generateP8Key(in: directory), password: "s3cret")
        XCTAssertThrowsError(try JWTSigner(keyFile: file, keyID: "ABC123DEFG", teamID: "DEF123GHIJ")) {
            XCTAssertTrue("\($0)".hasPrefix("APNs key \(file): encrypted key: no password configured"), "\($0)")
        }
    }

    func testAnEncryptedServiceAccountKeyIsAClearError() throws {
        let account = try ServiceAccountFixture()
        let key = try String(contentsOfFile: try encrypted(account.keyFile, password: "s3cret"), encoding: .utf8)
        let path = try account.writeJSON(tokenURI: "https://oauth2.googleapis.com/token") { $0["private_key"] = key }
        XCTAssertThrowsError(try ServiceAccount.load(path: path)) {
            XCTAssertTrue("\($0)".hasPrefix("FCM service account file \(path): \"private_key\" is an encrypted key: no password configured"), "\($0)")
        }
    }

    /// A PEM client certificate whose key is encrypted loads with `cert_password` and is a clear error without it
    /// or with a wrong one, checked at start for both drivers (libcurl would otherwise prompt at its first connection).
    func testAnEncryptedClientCertificateKeyNeedsCertPassword() throws {
        let certificates = try generateClientCertificate(in: directory, password: "unused")
        let key = try encrypted(directory + "/client.key", password: "s3cret")
        let pem = directory + "/encrypted-client.pem"
        try (String(contentsOfFile: directory + "/client.crt", encoding: .utf8) + String(contentsOfFile: key, encoding: .utf8))
            .write(toFile: pem, atomically: true, encoding: .utf8)
        XCTAssertNoThrow(try ClientCertificate.validate(file: certificates.pem, password: ""), "an unencrypted key needs no password")
        XCTAssertNoThrow(try ClientCertificate.validate(file: pem, password: "s3cret"))
        XCTAssertThrowsError(try ClientCertificate.validate(file: pem, password: "")) {
            XCTAssertEqual("\($0)", "APNs certificate \(pem): encrypted key: no password configured (cert_password)")
        }
        XCTAssertThrowsError(try ClientCertificate.validate(file: pem, password: "wrong")) {
            XCTAssertEqual("\($0)", "APNs certificate \(pem): encrypted key: the password (cert_password) is wrong")
        }
    }
}
