@testable import FCMProvider
import Foundation
@testable import PushEmulator
@testable import HuaweiProvider
import Pusher
import ProviderKit
import PushCore
import TestSupport
import XCTest

/// The credential files and the bearers made from them: v1's client secret (trimmed, never shown) and Huawei's
/// token endpoint answers; v3's key file and its PS256 JWT, verified by the openssl command with the public key
/// and by the emulator's verifier, reused until half its life and signed again after a rejection.
final class HuaweiCredentialTests: XCTestCase {
    // MARK: v1

    func testTheClientSecretIsReadTrimmedAndNeverShown() throws {
        let file = try Fixture.secretFile()
        let credentials = try HuaweiClientCredentials.load(clientID: Fixture.appID, secretFile: file)
        XCTAssertEqual(credentials.secret.value, Fixture.secret)
        XCTAssertEqual(credentials.grantForm,
                       "grant_type=client_credentials&client_id=104123456&client_secret=c2VjcmV0LWZvci10ZXN0cw%2B%2F%3D")
        for text in ["\(credentials)", "\(credentials.secret)", String(reflecting: credentials)] {
            XCTAssertFalse(text.contains(Fixture.secret), text)
        }
    }

    func testSecretFileErrorsNameTheFileNotTheSecret() throws {
        let empty = makeTemporaryDirectory("huawei-empty") + "/secret.txt"
        try " \n\t".write(toFile: empty, atomically: true, encoding: .utf8)
        let cases: [(id: String, file: String, words: String)] = [
            (Fixture.appID, empty, "empty"),
            (Fixture.appID, "/nonexistent/huawei-secret.txt", "not found"),
            ("", try Fixture.secretFile(), "app_id"),
        ]
        for (id, file, words) in cases {
            XCTAssertThrowsError(try HuaweiClientCredentials.load(clientID: id, secretFile: file)) { error in
                let text = "\(error)"
                XCTAssertTrue(text.contains(file), text)
                XCTAssertTrue(text.contains(words), text)
                XCTAssertFalse(text.contains(Fixture.secret), text)
            }
        }
    }

    func testHuaweisTokenAnswersAreReadInItsOwnTerms() {
        let uri = "https://oauth.invalid/oauth2/v3/token"
        func classify(_ status: Int, _ body: String) -> TokenGrant {
            HuaweiTokenAnswer.classify(status: status, body: Array(body.utf8), clientID: Fixture.appID, uri: uri)
        }
        XCTAssertEqual(classify(200, #"{"access_token":"abc","expires_in":3600,"token_type":"Bearer"}"#),
                       .granted(accessToken: Secret("abc"), expiresIn: 3600))
        XCTAssertEqual(classify(200, #"{"access_token":"abc"}"#), .granted(accessToken: Secret("abc"), expiresIn: 3600))
        XCTAssertEqual(classify(200, #"{"access_token":"abc","expires_in":-5}"#), .granted(accessToken: Secret("abc"), expiresIn: 1))
        if case .unavailable = classify(200, "{}") {} else { XCTFail("200 without a token waits") }
        if case .unavailable = classify(503, "") {} else { XCTFail("503 waits") }
        if case .unavailable = classify(429, "") {} else { XCTFail("429 waits") }
        guard case .refused(let reason) = classify(400, #"{"sub_error":12304,"error_description":"invalid client_secret","error":1101}"#) else {
            return XCTFail("a wrong secret is refused")
        }
        XCTAssertTrue(reason.contains("error 1101/12304: invalid client_secret"), reason)
        XCTAssertTrue(reason.contains(Fixture.appID), reason)
    }

    // MARK: v3

    func testTheKeyFileIsReadAndItsProblemsNamedWithoutTheKey() throws {
        let fixture = try HuaweiKeyFixture()
        let account = try HuaweiServiceAccount.load(path: fixture.jsonFile)
        XCTAssertEqual(account.projectID, fixture.projectID)
        XCTAssertEqual(account.keyID, fixture.keyID)
        XCTAssertEqual(account.subAccount, fixture.subAccount)
        XCTAssertEqual(account.tokenURI, "https://oauth-login.cloud.huawei.com/oauth2/v3/token")
        let keyText = try String(contentsOfFile: fixture.keyFile, encoding: .utf8)
        let keyLine = keyText.split(separator: "\n")[1]
        XCTAssertFalse("\(account)".contains(keyLine))

        let directory = makeTemporaryDirectory("huawei-bad-keys")
        let ecKey = try String(contentsOfFile: try generateP8Key(in: directory), encoding: .utf8)
        let short = try HuaweiKeyFixture(bits: 1024)
        let shortKey = try String(contentsOfFile: short.keyFile, encoding: .utf8)
        func file(_ fields: [String: Any], _ name: String) throws -> String {
            let path = directory + "/\(name).json"
            try JSONSerialization.data(withJSONObject: fields).write(to: URL(fileURLWithPath: path))
            return path
        }
        let base: [String: Any] = ["project_id": "1", "key_id": "k", "sub_account": "s", "private_key": keyText]
        var cases: [(path: String, words: String)] = [
            ("/nonexistent/key.json", "not found"),
            (try file(base.filter { $0.key != "key_id" }, "no-kid"), "missing field \"key_id\""),
            (try file(base.merging(["sub_account": 7.5]) { $1 }, "typed"), "\"sub_account\" must be a non-empty string"),
            (try file(base.merging(["private_key": "garbage"]) { $1 }, "garbage"), "not a PEM private key"),
            (try file(base.merging(["private_key": ecKey]) { $1 }, "ec"), "not an RSA key"),
            (try file(base.merging(["private_key": shortKey]) { $1 }, "short"), "shorter than 2048 bits"),
        ]
        let notJSON = directory + "/not.json"
        try "{\"private_key\":\"\(keyLine)".write(toFile: notJSON, atomically: true, encoding: .utf8)
        cases.append((notJSON, "not valid JSON"))
        for (path, words) in cases {
            XCTAssertThrowsError(try HuaweiServiceAccount.load(path: path)) { error in
                let text = "\(error)"
                XCTAssertTrue(text.contains(path) && text.contains(words), text)
                XCTAssertFalse(text.contains(keyLine), "the key's text never shows")
            }
        }
    }

    func testTheJWTIsPS256WithHuaweisHeaderAndClaimsVerifiedByOpenSSLAndTheEmulator() throws {
        let fixture = try HuaweiKeyFixture()
        let signer = try HuaweiJWTSigner(account: try HuaweiServiceAccount.load(path: fixture.jsonFile))
        let issuedAt = Int64(Date().timeIntervalSince1970)
        let jwt = try signer.token(issuedAt: issuedAt)
        let parts = jwt.split(separator: ".").map(String.init)
        XCTAssertEqual(parts.count, 3)
        XCTAssertEqual(String(decoding: try XCTUnwrap(CompactJWS.base64URL(parts[0][...])), as: UTF8.self),
                       #"{"alg":"PS256","kid":"a1b2c3d4e5f6","typ":"JWT"}"#)
        XCTAssertEqual(String(decoding: try XCTUnwrap(CompactJWS.base64URL(parts[1][...])), as: UTF8.self),
                       #"{"aud":"https://oauth-login.cloud.huawei.com/oauth2/v3/token","exp":\#(issuedAt + 3600),"#
                       + #""iat":\#(issuedAt),"iss":"100123456"}"#)
        let signature = try XCTUnwrap(CompactJWS.base64URL(parts[2][...]))
        XCTAssertEqual(signature.count, 256)

        // The openssl command, with the public key only: PSS, SHA-256, a 32-byte salt (and not another length).
        let input = fixture.directory + "/input", signatureFile = fixture.directory + "/signature"
        try Data("\(parts[0]).\(parts[1])".utf8).write(to: URL(fileURLWithPath: input))
        try Data(signature).write(to: URL(fileURLWithPath: signatureFile))
        func opensslVerifies(saltLength: Int) throws -> Bool {
            try runCommand(which("openssl") ?? "/usr/bin/openssl", [
                "dgst", "-sha256", "-sigopt", "rsa_padding_mode:pss", "-sigopt", "rsa_pss_saltlen:\(saltLength)",
                "-verify", try fixture.publicKeyFile(), "-signature", signatureFile, input,
            ]).status == 0
        }
        XCTAssertTrue(try opensslVerifies(saltLength: 32))
        XCTAssertFalse(try opensslVerifies(saltLength: 20), "the salt is the digest's length, as PS256 requires")

        // The emulator's verifier, which checks PS256 strictly, the kid, iss, aud, project and times.
        var settings = EmulatorConfiguration.HuaweiSettings()
        settings.serviceAccounts = [try .init(keyJSONFile: fixture.jsonFile)]
        let verifier = try HuaweiJWTVerifier(settings: settings)
        guard case .success = verifier.verify(jwt, project: fixture.projectID, now: Double(issuedAt) + 10, authority: nil) else {
            return XCTFail("the emulator refused the JWT")
        }
        guard case .failure = verifier.verify(jwt, project: fixture.projectID, now: Double(issuedAt) + 3601, authority: nil) else {
            return XCTFail("an hour later it has expired")
        }
        for text in ["\(signer)", String(reflecting: signer)] { XCTAssertFalse(text.contains(jwt)) }
    }

    func testTheAudienceIsTheKeyFilesTokenURIElseTheConfiguredOne() throws {
        let without = try HuaweiKeyFixture(tokenURI: nil)
        let account = try HuaweiServiceAccount.load(path: without.jsonFile)
        XCTAssertNil(account.tokenURI)
        XCTAssertEqual(try HuaweiJWTSigner(account: account, defaultAudience: "https://127.0.0.1:8445/oauth2/v3/token").audience,
                       "https://127.0.0.1:8445/oauth2/v3/token")
        let with = try HuaweiKeyFixture(tokenURI: "https://oauth.example/token")
        XCTAssertEqual(try HuaweiJWTSigner(account: try HuaweiServiceAccount.load(path: with.jsonFile),
                                           defaultAudience: "https://other.example").audience, "https://oauth.example/token")
    }

    func testOneJWTIsReusedUntilHalfItsLifeAndSignedAgainAfterARejection() throws {
        let fixture = try HuaweiKeyFixture()
        let clock = Locked<Int64>(1_800_000_000)
        let signer = try HuaweiJWTSigner(account: try HuaweiServiceAccount.load(path: fixture.jsonFile), now: { clock.withLock { $0 } })
        let first = try signer.current()
        XCTAssertEqual(first.generation, 1)
        clock.withLock { $0 += 1799 }
        XCTAssertEqual(try signer.current().jwt, first.jwt, "reused within half its life")
        XCTAssertEqual(try signer.current().generation, 1)
        clock.withLock { $0 += 1 }
        let second = try signer.current()
        XCTAssertEqual(second.generation, 2, "signed anew at half life")
        XCTAssertNotEqual(second.jwt, first.jwt)

        XCTAssertFalse(signer.renew(generation: 1), "an older JWT's rejection changes nothing")
        XCTAssertEqual(try signer.current().generation, 2)
        XCTAssertTrue(signer.renew(generation: 2))
        XCTAssertFalse(signer.renew(generation: 2), "many requests reporting one JWT: one renewal")
        let third = try signer.current()
        XCTAssertEqual(third.generation, 3)
        XCTAssertEqual(try signer.current().generation, 3)

        // A clock set back past the JWT's iat: a new one rather than one "issued in the future".
        clock.withLock { $0 -= 600 }
        XCTAssertEqual(try signer.current().generation, 4)
    }
}
