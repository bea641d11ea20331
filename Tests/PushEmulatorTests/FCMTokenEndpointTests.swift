@testable import FCMProvider
import Foundation
import PushCore
@testable import PushEmulator
@testable import ProviderKit
@testable import Pusher
import TestSupport
import XCTest

/// The emulator's FCM token endpoint (`POST /token`), reached over HTTP/2 + TLS by the worker's own
/// `TokenEndpoint`: what it accepts, and Google's refusals for what it does not.
final class FCMTokenEndpointTests: XCTestCase {
    private var account: ServiceAccountFixture!
    private var server: EmulatorStandIn!
    private var loaded: ServiceAccount!

    override func setUp() async throws {
        account = try ServiceAccountFixture()
        let trusted = account.trusted
        server = try await EmulatorStandIn {
            $0.fcmServiceAccounts = [trusted]
            $0.fcmAccessTokenLifetimeSeconds = 120
        }
        loaded = try ServiceAccount.load(path: try account.writeJSON(tokenURI: server.endpoint + "/token"))
    }

    override func tearDown() async throws {
        await server?.stop()
    }

    private var endpoint: TokenEndpoint { TokenEndpoint(uri: server.endpoint + "/token", caFile: server.caFile) }

    private func grant(issuedAt: Int64 = WallClock.nowSeconds(), audience: String? = nil) throws -> TokenGrant {
        endpoint.exchange(assertion: try AssertionSigner(account: loaded, audience: audience).assertion(issuedAt: issuedAt))
    }

    /// A JWT with any header and claims, signed RS256 by `keyFile` with the openssl command (not our signer).
    private func handMadeAssertion(header: [String: Any], claims: [String: Any], keyFile: String) throws -> String {
        func part(_ object: [String: Any]) throws -> String {
            Base64URL.encode(Array(try JSONSerialization.data(withJSONObject: object)))
        }
        let input = try part(header) + "." + part(claims)
        let inputFile = account.directory + "/input-\(UUID().uuidString)"
        try input.write(toFile: inputFile, atomically: true, encoding: .utf8)
        let signatureFile = inputFile + ".sig"
        let result = try runCommand(which("openssl") ?? "/usr/bin/openssl",
                                    ["dgst", "-sha256", "-sign", keyFile, "-out", signatureFile, inputFile])
        guard result.status == 0 else { throw TestSetupError("openssl dgst failed: \(result.output)") }
        let signature = try Data(contentsOf: URL(fileURLWithPath: signatureFile))
        return input + "." + Base64URL.encode(Array(signature))
    }

    private func claims(iat: Int64 = WallClock.nowSeconds(), exp: Int64? = nil, scope: String = AssertionSigner.messagingScope,
                        iss: String = ServiceAccountFixture.clientEmail, aud: String? = nil) -> [String: Any] {
        ["iss": iss, "scope": scope, "aud": aud ?? server.endpoint + "/token", "iat": iat, "exp": exp ?? iat + 3600]
    }

    private var header: [String: Any] { ["alg": "RS256", "typ": "JWT", "kid": account.privateKeyID] }

    private func assertRefused(_ grant: TokenGrant, saying words: String, file: StaticString = #filePath, line: UInt = #line) {
        guard case .refused(let reason) = grant else { return XCTFail("expected a refusal, got \(grant)", file: file, line: line) }
        XCTAssertTrue(reason.contains(words), reason, file: file, line: line)
    }

    func testAValidAssertionGetsAnAccessTokenTheRegistryKnows() throws {
        guard case .granted(let token, let expiresIn) = try grant() else { return XCTFail("no token") }
        XCTAssertEqual(expiresIn, 120, "the configured lifetime")
        XCTAssertTrue(token.value.hasPrefix("ya29."))
        let registry = server.emulator.fcmTokens
        XCTAssertEqual(registry.check(bearer: token.value), .valid(clientEmail: ServiceAccountFixture.clientEmail))
        XCTAssertEqual(registry.check(bearer: "ya29.never-issued"), .unknown)
        XCTAssertEqual(registry.check(bearer: token.value, now: Date().timeIntervalSince1970 + 121), .expired)
        registry.revokeAll()
        XCTAssertEqual(registry.check(bearer: token.value), .revoked)
        registry.setLifetime(seconds: 4)
        guard case .granted(_, let shorter) = try grant() else { return XCTFail("no second token") }
        XCTAssertEqual(shorter, 4)
        XCTAssertEqual(registry.requestCount, 2)
        XCTAssertEqual(registry.issuedCount, 2)
        // A hand-made assertion (openssl, not our signer) is as good: the check is RS256, not our encoding.
        let manual = try handMadeAssertion(header: header, claims: claims(), keyFile: account.keyFile)
        guard case .granted = endpoint.exchange(assertion: manual) else { return XCTFail("hand-made assertion refused") }
    }

    func testClockSkewIsInvalidGrantInGooglesWords() throws {
        let google = "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe"
        let ahead = try grant(issuedAt: WallClock.nowSeconds() + 3600)  // this host's clock an hour ahead
        assertRefused(ahead, saying: google)
        assertRefused(ahead, saying: "Clock skew is the classic cause")
        assertRefused(try grant(issuedAt: WallClock.nowSeconds() - 7200), saying: google)  // two hours behind: expired
        let tooLong = try handMadeAssertion(header: header, claims: claims(exp: WallClock.nowSeconds() + 7200), keyFile: account.keyFile)
        assertRefused(endpoint.exchange(assertion: tooLong), saying: google)
        // A little skew is tolerated, as Google does.
        guard case .granted = try grant(issuedAt: WallClock.nowSeconds() + 30) else { return XCTFail("30 s of skew refused") }
    }

    func testTheClaimsAndTheKeyAreChecked() throws {
        assertRefused(try grant(audience: "https://oauth2.googleapis.com/elsewhere"), saying: "Invalid JWT: Failed audience check.")
        let scope = try handMadeAssertion(header: header, claims: claims(scope: "https://www.googleapis.com/auth/cloud-platform.read-only"),
                                          keyFile: account.keyFile)
        assertRefused(endpoint.exchange(assertion: scope), saying: "HTTP 400 invalid_scope")
        let issuer = try handMadeAssertion(header: header, claims: claims(iss: "someone@else.iam.gserviceaccount.com"), keyFile: account.keyFile)
        assertRefused(endpoint.exchange(assertion: issuer), saying: "Invalid grant: account not found")
        var unknownKid = header
        unknownKid["kid"] = "ffffffffffffffffffffffffffffffffffffffff"
        assertRefused(endpoint.exchange(assertion: try handMadeAssertion(header: unknownKid, claims: claims(), keyFile: account.keyFile)),
                      saying: "Invalid grant: account not found")
        var es256 = header
        es256["alg"] = "ES256"
        assertRefused(endpoint.exchange(assertion: try handMadeAssertion(header: es256, claims: claims(), keyFile: account.keyFile)),
                      saying: "invalid_grant")
        let otherKey = try ServiceAccountFixture(privateKeyID: account.privateKeyID)
        assertRefused(endpoint.exchange(assertion: try handMadeAssertion(header: header, claims: claims(), keyFile: otherKey.keyFile)),
                      saying: "HTTP 400 invalid_grant: Invalid JWT Signature.")
        assertRefused(endpoint.exchange(assertion: "not-a-jwt"), saying: "invalid_grant")
        XCTAssertEqual(server.emulator.fcmTokens.issuedCount, 0)
        XCTAssertEqual(server.emulator.fcmTokens.refusalCount, 7)
    }

    /// Google accepts only its token endpoint's exact URL as `aud`; the emulator only the URL the request was
    /// posted to, so a client that signs any other spelling fails here as it would in production.
    func testTheAudienceMustBeExactlyTheURLPostedTo() throws {
        let posted = server.endpoint + "/token"
        XCTAssertTrue(posted.hasPrefix("https://127.0.0.1:"), posted)
        for wrong in [posted + "/", posted.replacingOccurrences(of: "https://", with: "http://"),
                      posted.replacingOccurrences(of: "127.0.0.1", with: "localhost"), posted + "?x=1",
                      "https://oauth2.googleapis.com/token", posted.uppercased()] {
            let assertion = try handMadeAssertion(header: header, claims: claims(aud: wrong), keyFile: account.keyFile)
            assertRefused(endpoint.exchange(assertion: assertion), saying: "Invalid JWT: Failed audience check.")
        }
        XCTAssertEqual(server.emulator.fcmTokens.issuedCount, 0)
        let exact = try handMadeAssertion(header: header, claims: claims(aud: posted), keyFile: account.keyFile)
        guard case .granted = endpoint.exchange(assertion: exact) else { return XCTFail("the exact URL was refused") }
    }

    func testTheGrantTypeAndTheFormAreChecked() throws {
        let tokenEndpoint = try FCMTokenEndpoint(configuration: {
            var configuration = EmulatorConfiguration()
            configuration.fcmServiceAccounts = [account.trusted]
            return configuration
        }(), registry: AccessTokenRegistry(lifetimeSeconds: 60))
        func post(_ form: String) -> (status: Int, body: String) {
            tokenEndpoint.answer(IncomingRequest(method: "POST", path: "/token", headers: [("host", "127.0.0.1:1")], body: Array(form.utf8)))
        }
        let wrongGrant = post("grant_type=client_credentials&assertion=a.b.c")
        XCTAssertEqual(wrongGrant.status, 400)
        XCTAssertTrue(wrongGrant.body.contains(#""error":"unsupported_grant_type""#), wrongGrant.body)
        let noAssertion = post("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer")
        XCTAssertTrue(noAssertion.body.contains(#""error":"invalid_request""#), noAssertion.body)
        let assertion = try AssertionSigner(account: loaded, audience: "https://127.0.0.1:1/token").assertion(issuedAt: WallClock.nowSeconds())
        let granted = post("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=\(assertion)")
        XCTAssertEqual(granted.status, 200, granted.body)
        XCTAssertTrue(granted.body.contains(#""token_type":"Bearer""#), granted.body)
        let hostile = post("grant_type=%22%5C%0A")
        XCTAssertNotNil(try? JSONSerialization.jsonObject(with: Data(hostile.body.utf8)), "always valid JSON: \(hostile.body)")
    }

    func testDownMeansA503TheClientWaitsForThenTokensAgain() throws {
        server.emulator.fcmTokens.setDown(true)
        guard case .unavailable(let reason) = try grant() else { return XCTFail("a 503 is not a refusal") }
        XCTAssertTrue(reason.contains("HTTP 503"), reason)
        server.emulator.fcmTokens.setDown(false)
        guard case .granted = try grant() else { return XCTFail("back up") }
        XCTAssertEqual(server.emulator.fcmTokens.requestCount, 2)
    }

    func testTheServiceAccountJSONFileItselfCanBeTrusted() async throws {
        let file = try account.writeJSON(tokenURI: "https://127.0.0.1/token", name: "trusted.json")
        let trusted = try EmulatorConfiguration.ServiceAccountKey(serviceAccountFile: file)
        XCTAssertEqual(trusted.clientEmail, ServiceAccountFixture.clientEmail)
        XCTAssertEqual(trusted.privateKeyID, account.privateKeyID)
        let other = try await EmulatorStandIn { $0.fcmServiceAccounts = [trusted] }
        let endpoint = TokenEndpoint(uri: other.endpoint + "/token", caFile: other.caFile)
        guard case .granted = endpoint.exchange(assertion: try AssertionSigner(account: loaded, audience: endpoint.uri)
            .assertion(issuedAt: WallClock.nowSeconds())) else { return XCTFail("the JSON file's key was not trusted") }
        await other.stop()
        XCTAssertThrowsError(try EmulatorConfiguration.ServiceAccountKey(serviceAccountFile: account.keyFile))
    }

    func testTheEmulatorRefusesAKeyFileThatIsNotRSA() throws {
        var configuration = EmulatorConfiguration()
        configuration.fcmServiceAccounts = [.init(clientEmail: "a@b", privateKeyID: "k", keyFile: try generateP8Key(in: account.directory))]
        XCTAssertThrowsError(try FCMTokenEndpoint(configuration: configuration, registry: AccessTokenRegistry(lifetimeSeconds: 1)))
    }
}
