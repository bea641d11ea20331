@testable import FCMProvider
import PushEmulator
import Foundation
@testable import ProviderKit
import PushCore
@testable import Pusher
import TestSupport
import XCTest

/// FCM access tokens for a service account (docs/fcm.md) against the emulator's real token endpoint (HTTP/2, TLS):
/// the key file, the RS256 assertion, the grant, and the cache's renewal rules.
final class FCMAccessTokenTests: XCTestCase {
    /// FCM's rules are its module's: registered, as the worker registers it at start-up.
    override class func setUp() {
        super.setUp()
        _ = PushProvider.fcm
    }

    /// Events the cache reports, in order, with when they came.
    private final class Changes: Sendable {
        private let entries = Locked<[(state: AccessTokenState, at: ContinuousClock.Instant)]>([])
        func append(_ state: AccessTokenState) { entries.withLock { $0.append((state, ContinuousClock.now)) } }
        var all: [(state: AccessTokenState, at: ContinuousClock.Instant)] { entries.withLock { $0 } }
        func firstReady(generation: Int) -> ContinuousClock.Instant? {
            all.first { $0.state.token?.generation == generation }?.at
        }
    }

    private func emulator(trusting account: ServiceAccountFixture, lifetime: Int64 = 3600) async throws -> EmulatorStandIn {
        try await EmulatorStandIn {
            $0.fcmServiceAccounts = [account.trusted]
            $0.fcmAccessTokenLifetimeSeconds = lifetime
        }
    }

    private func cache(_ account: ServiceAccountFixture, server: EmulatorStandIn, changes: Changes? = nil,
                       refusedRetrySeconds: Double = 60) throws -> AccessTokenCache {
        let loaded = try ServiceAccount.load(path: try account.writeJSON(tokenURI: server.endpoint + "/token"))
        let signer = try AssertionSigner(account: loaded)
        let endpoint = TokenEndpoint(uri: loaded.tokenURI, caFile: server.caFile)
        let report: @Sendable (AccessTokenState) -> Void = { changes?.append($0) }
        return AccessTokenCache(signer: signer, endpoint: endpoint, refusedRetrySeconds: refusedRetrySeconds, onChange: report)
    }

    // MARK: - The key file

    func testServiceAccountFileLoadsAndItsErrorsNameTheFileAndTheProblem() throws {
        let account = try ServiceAccountFixture()
        let path = try account.writeJSON(tokenURI: "https://oauth2.googleapis.com/token")
        let loaded = try ServiceAccount.load(path: path)
        XCTAssertEqual(loaded.projectID, ServiceAccountFixture.projectID)
        XCTAssertEqual(loaded.clientEmail, ServiceAccountFixture.clientEmail)
        XCTAssertEqual(loaded.privateKeyID, account.privateKeyID)
        XCTAssertEqual(loaded.tokenURI, "https://oauth2.googleapis.com/token")

        func loadError(_ path: String) -> String {
            do {
                _ = try ServiceAccount.load(path: path)
                return "loaded"
            } catch {
                return error.description
            }
        }
        let missing = try account.writeJSON(tokenURI: "https://x/token", name: "missing.json") { $0["client_email"] = nil }
        XCTAssertEqual(loadError(missing), "FCM service account file \(missing): missing field \"client_email\"")
        let wrongType = try account.writeJSON(tokenURI: "https://x/token", name: "type.json") { $0["type"] = "authorized_user" }
        XCTAssertTrue(loadError(wrongType).contains("expected \"service_account\""), loadError(wrongType))
        let notString = try account.writeJSON(tokenURI: "https://x/token", name: "number.json") { $0["project_id"] = 42 }
        XCTAssertTrue(loadError(notString).contains("\"project_id\" must be a non-empty string, not a number"), loadError(notString))
        let ecKey = try generateP8Key(in: account.directory)
        let ec = try account.writeJSON(tokenURI: "https://x/token", name: "ec.json") {
            $0["private_key"] = try? String(contentsOfFile: ecKey, encoding: .utf8)
        }
        XCTAssertEqual(loadError(ec), "FCM service account file \(ec): \"private_key\" is not an RSA key (service account keys sign RS256)")
        let garbage = try account.writeJSON(tokenURI: "https://x/token", name: "garbage.json") {
            $0["private_key"] = "-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5\n-----END PRIVATE KEY-----\n"
        }
        XCTAssertTrue(loadError(garbage).contains("is not a PEM private key"), loadError(garbage))
        let absent = account.directory + "/absent.json"
        XCTAssertEqual(loadError(absent), "FCM service account file \(absent): file not found or not readable")
        let notJSON = account.directory + "/not.json"
        try "type: service_account".write(toFile: notJSON, atomically: true, encoding: .utf8)
        XCTAssertTrue(loadError(notJSON).hasPrefix("FCM service account file \(notJSON): not valid JSON"), loadError(notJSON))
    }

    /// A service account file's `token_uri` is held to `fcm.token_uri`'s rule: https, or plain http to loopback only.
    func testAPlainHTTPTokenURIIsRefusedUnlessItIsLoopback() throws {
        let account = try ServiceAccountFixture()
        for uri in ["http://127.0.0.1:9443/token", "http://[::1]:9443/token", "http://localhost:9443/token"] {
            XCTAssertEqual(try ServiceAccount.load(path: try account.writeJSON(tokenURI: uri)).tokenURI, uri)
        }
        for uri in ["http://oauth2.googleapis.com/token", "http://127.0.0.1@oauth2.googleapis.com/token"] {
            let path = try account.writeJSON(tokenURI: uri)
            XCTAssertThrowsError(try ServiceAccount.load(path: path), uri) {
                XCTAssertEqual("\($0)", "FCM service account file \(path): \"token_uri\" '\(uri)' is plain http: use https (http only to this machine: 127.0.0.0/8, ::1, localhost)")
            }
        }
    }

    func testThePrivateKeyAndTheAccessTokenNeverReachADescription() async throws {
        let account = try ServiceAccountFixture()
        let server = try await emulator(trusting: account)
        let cache = try cache(account, server: server)
        try await eventually { cache.state.token != nil }
        let token = try XCTUnwrap(cache.state.token)
        let loaded = try ServiceAccount.load(path: try account.writeJSON(tokenURI: server.endpoint + "/token"))
        let signer = try AssertionSigner(account: loaded)
        let grant = TokenGrant.granted(accessToken: token.bearer, expiresIn: 3600)
        // The key's body lines (the PEM armour alone would prove nothing), and the bearer.
        let keyLines = account.privateKeyPEM.split(separator: "\n").filter { !$0.hasPrefix("-----") }
        XCTAssertGreaterThan(keyLines.count, 10)
        let values: [Any] = [loaded, signer, cache, token, cache.state, grant,
                             ServiceAccountError(path: loaded.file, reason: "x"), TokenEndpoint(uri: loaded.tokenURI)]
        for value in values {
            var dumped = ""
            dump(value, to: &dumped)
            for text in [String(describing: value), String(reflecting: value), dumped] {
                for line in keyLines { XCTAssertFalse(text.contains(line), "\(type(of: value)) shows the private key: \(text)") }
                XCTAssertFalse(text.contains(token.bearer.value), "\(type(of: value)) shows the access token: \(text)")
                XCTAssertFalse(text.contains(String(token.bearer.value.dropFirst(5).prefix(16))), "\(type(of: value)): \(text)")
            }
        }
        await cache.shutdown()
        await server.stop()
    }

    // MARK: - The assertion

    func testTheAssertionIsAnRS256JWTWithGooglesClaims() throws {
        let account = try ServiceAccountFixture()
        let loaded = try ServiceAccount.load(path: try account.writeJSON(tokenURI: "https://oauth2.googleapis.com/token"))
        let jwt = try AssertionSigner(account: loaded).assertion(issuedAt: 1_700_000_000)
        let parts = jwt.split(separator: ".").map { part -> [String: Any] in
            var base64 = part.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            while base64.count % 4 != 0 { base64 += "=" }
            return (try? JSONSerialization.jsonObject(with: Data(base64Encoded: base64) ?? Data())) as? [String: Any] ?? [:]
        }
        XCTAssertEqual(parts.count, 3)
        XCTAssertEqual(parts[0]["alg"] as? String, "RS256")
        XCTAssertEqual(parts[0]["typ"] as? String, "JWT")
        XCTAssertEqual(parts[0]["kid"] as? String, account.privateKeyID)
        XCTAssertEqual(parts[1]["iss"] as? String, ServiceAccountFixture.clientEmail)
        XCTAssertEqual(parts[1]["scope"] as? String, "https://www.googleapis.com/auth/firebase.messaging")
        XCTAssertEqual(parts[1]["aud"] as? String, "https://oauth2.googleapis.com/token")
        XCTAssertEqual(parts[1]["iat"] as? Int, 1_700_000_000)
        XCTAssertEqual(parts[1]["exp"] as? Int, 1_700_003_600)
        // A 2048-bit RSA signature is 256 bytes: 342 base64url characters.
        XCTAssertEqual(jwt.split(separator: ".")[2].count, 342)
        let overridden = try AssertionSigner(account: loaded, audience: "https://127.0.0.1:9/token")
        XCTAssertEqual(overridden.audience, "https://127.0.0.1:9/token")
    }

    func testRenewalMomentFollowsTheSpec() {
        XCTAssertEqual(AccessTokenRenewal.renewAfter(expiresIn: 3600), 3300, "5 minutes before expiry")
        XCTAssertEqual(AccessTokenRenewal.renewAfter(expiresIn: 600), 300)
        XCTAssertEqual(AccessTokenRenewal.renewAfter(expiresIn: 599), 299.5, "under 10 minutes: at half its life")
        XCTAssertEqual(AccessTokenRenewal.renewAfter(expiresIn: 4), 2)
    }

    // MARK: - The grant

    func testATokenIsObtainedAndTheEmulatorKnowsIt() async throws {
        let account = try ServiceAccountFixture()
        let server = try await emulator(trusting: account)
        let cache = try cache(account, server: server)
        try await eventually { cache.state.token != nil }
        let token = try XCTUnwrap(cache.state.token)
        XCTAssertEqual(token.generation, 1)
        XCTAssertEqual(token.expiresIn, 3600)
        XCTAssertEqual(server.emulator.fcmTokens.check(bearer: token.bearer.value), .valid(clientEmail: ServiceAccountFixture.clientEmail))
        XCTAssertEqual(server.emulator.fcmTokens.requestCount, 1, "one request, none while the token is fresh")
        XCTAssertEqual(cache.requestCount, 1)
        await cache.shutdown()
        await server.stop()
    }

    func testShortLivedTokensAreRenewedAtHalfTheirLifeOneRequestEach() async throws {
        let account = try ServiceAccountFixture()
        let server = try await emulator(trusting: account, lifetime: 4)
        let changes = Changes()
        let cache = try cache(account, server: server, changes: changes)
        try await eventually(timeout: .seconds(30)) { cache.state.token?.generation ?? 0 >= 3 }
        await cache.shutdown()
        let first = try XCTUnwrap(changes.firstReady(generation: 1))
        let second = try XCTUnwrap(changes.firstReady(generation: 2))
        XCTAssertGreaterThanOrEqual(second - first, .milliseconds(1500), "renewed when half of 4 s remained, not earlier")
        // Renewed before it expired: from the first token on, the state never left `ready`.
        let afterFirst = changes.all.drop { $0.state.token == nil }
        XCTAssertTrue(afterFirst.allSatisfy { $0.state.token != nil }, "\(afterFirst.map(\.state))")
        XCTAssertEqual(server.emulator.fcmTokens.requestCount, cache.requestCount, "one request per renewal")
        XCTAssertEqual(server.emulator.fcmTokens.issuedCount, cache.state.token?.generation ?? cache.requestCount)
        XCTAssertLessThanOrEqual(cache.requestCount, 4)
        await server.stop()
    }

    func testARevokedTokenReportedByManyCallersLeadsToExactlyOneRenewal() async throws {
        let account = try ServiceAccountFixture()
        let server = try await emulator(trusting: account)
        let cache = try cache(account, server: server)
        try await eventually { cache.state.token != nil }
        let revoked = try XCTUnwrap(cache.state.token)
        server.emulator.fcmTokens.revokeAll()
        XCTAssertEqual(server.emulator.fcmTokens.check(bearer: revoked.bearer.value), .revoked)

        // Every stream that got 401 for it reports it, at once.
        let started = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<50 { group.addTask { cache.rejected(generation: revoked.generation) } }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        XCTAssertEqual(started, 1, "one renewal for one rejected token")
        if case .unavailable(let reason) = cache.state {
            XCTAssertTrue(reason.contains("rejected"), reason)
        } else if cache.state.token?.generation != 2 {
            XCTFail("a rejected token must not be handed out: \(cache.state)")
        }
        try await eventually { cache.state.token?.generation == 2 }
        let renewed = try XCTUnwrap(cache.state.token)
        XCTAssertEqual(server.emulator.fcmTokens.check(bearer: renewed.bearer.value), .valid(clientEmail: ServiceAccountFixture.clientEmail))
        // Late reports of the old token change nothing: a newer one exists.
        XCTAssertFalse(cache.rejected(generation: revoked.generation))
        XCTAssertEqual(cache.state.token?.generation, 2)
        XCTAssertEqual(server.emulator.fcmTokens.requestCount, 2)
        XCTAssertEqual(cache.requestCount, 2)

        // The new one rejected at once too (a server that keeps refusing): renewals stay a second apart.
        server.emulator.fcmTokens.revokeAll()
        XCTAssertTrue(cache.rejected(generation: 2))
        try await eventually { cache.state.token?.generation == 3 }
        let starts = cache.recentRequestStarts
        XCTAssertEqual(starts.count, 3)
        for (earlier, later) in zip(starts, starts.dropFirst()) {
            XCTAssertGreaterThanOrEqual(later - earlier, AccessTokenRenewal.minimumInterval, "never two token requests within a second")
        }
        XCTAssertEqual(server.emulator.fcmTokens.requestCount, 3)
        await cache.shutdown()
        await server.stop()
    }

    func testWhileTheEndpointIsDownThereIsNoTokenAndTheStateSaysWhyThenItRecovers() async throws {
        let account = try ServiceAccountFixture()
        let server = try await emulator(trusting: account)
        server.emulator.fcmTokens.setDown(true)
        let cache = try cache(account, server: server)
        if case .unavailable(let reason) = cache.state {
            XCTAssertFalse(reason.isEmpty)
        } else {
            XCTFail("none yet before the first answer: \(cache.state)")
        }
        try await eventually {
            if case .unavailable(let reason) = cache.state { return reason.contains("503") }
            return false
        }
        XCTAssertNil(cache.state.token)
        let failedRequests = server.emulator.fcmTokens.requestCount
        server.emulator.fcmTokens.setDown(false)
        try await eventually(timeout: .seconds(40)) { cache.state.token != nil }
        XCTAssertEqual(server.emulator.fcmTokens.issuedCount, 1)
        XCTAssertLessThanOrEqual(server.emulator.fcmTokens.requestCount, failedRequests + 1, "the 503s were retried with backoff")
        await cache.shutdown()
        await server.stop()
    }

    func testATokenThatExpiresWhileTheEndpointIsDownIsDroppedAtItsExpiryAndReplacedWhenItIsBack() async throws {
        let account = try ServiceAccountFixture()
        let server = try await emulator(trusting: account, lifetime: 4)
        let changes = Changes()
        let cache = try cache(account, server: server, changes: changes)
        try await eventually { cache.state.token != nil }
        server.emulator.fcmTokens.setDown(true)
        // Renewal at 2 s fails; at 4 s the token is no longer handed out, and the change is reported.
        try await eventually {
            changes.all.contains { change in
                if case .unavailable(let reason) = change.state { return reason.contains("expired") && reason.contains("503") }
                return false
            }
        }
        XCTAssertNil(cache.state.token)
        server.emulator.fcmTokens.setDown(false)
        try await eventually(timeout: .seconds(40)) { cache.state.token?.generation == 2 }
        XCTAssertEqual(changes.all.last?.state.token?.generation, 2)
        await cache.shutdown()
        await server.stop()
    }

    func testARefusedKeyIsTriedAgainLaterAndTheRefusalLiftsWhenTheEndpointAcceptsIt() async throws {
        let account = try ServiceAccountFixture()
        let stranger = try ServiceAccountFixture(privateKeyID: "1111111111111111111111111111111111111111")
        let server = try await emulator(trusting: stranger)
        let changes = Changes()
        let cache = try cache(account, server: server, changes: changes, refusedRetrySeconds: 1)
        try await eventually {
            if case .refused = cache.state { return true }
            return false
        }
        // The key restored at Google (here: the emulator restarted trusting it, on the same port).
        await server.stop()
        let trusted = account.trusted
        try await server.restart { $0.fcmServiceAccounts = [trusted] }
        try await eventually(timeout: .seconds(30)) { cache.state.token != nil }
        XCTAssertTrue(changes.all.contains { if case .refused = $0.state { return true } else { return false } })
        await cache.shutdown()
        await server.stop()
    }

    /// Readiness hears of a refused key from the cache's own requests, at start and at a renewal, with no message
    /// waiting to be sent; a granted token clears it. (It used to hear of it only from a message held for it.)
    func testARefusalAtStartOrAtRenewalTellsReadinessWithNoMessageAndAGrantedTokenClearsIt() async throws {
        let account = try ServiceAccountFixture()
        let stranger = try ServiceAccountFixture(privateKeyID: "2222222222222222222222222222222222222222")
        // Four-second tokens: renewed every two seconds once the key is accepted.
        let server = try await emulator(trusting: stranger, lifetime: 4)
        let readiness = Readiness(starting: false)
        let loaded = try ServiceAccount.load(path: try account.writeJSON(tokenURI: server.endpoint + "/token"))
        var fcm = FCMSettings()
        fcm.caFile = server.caFile
        let told = AccessTokenReadiness(readiness: readiness, app: "com.example.chat", service: "FCM")
        let cache = try FCMLanes.accessTokens(for: loaded, app: "com.example.chat", fcm: fcm, readiness: told, refusedRetrySeconds: 1)

        // At start.
        try await eventually { readiness.heldApps?.contains("invalid_grant") == true }
        XCTAssertEqual(readiness.heldApps?.hasPrefix("FCM rejected the credentials of com.example.chat: token endpoint "), true, readiness.heldApps ?? "")
        told.add(app: "com.example.other")  // an app of the same account added later is told too
        XCTAssertEqual(readiness.heldApps?.contains("FCM rejected the credentials of com.example.other: token endpoint "), true, readiness.heldApps ?? "")

        // The key accepted (the emulator restarted trusting it, on the same port): the first token clears it.
        let trusted = account.trusted, refusing = stranger.trusted
        await server.stop()
        try await server.restart { $0.fcmServiceAccounts = [trusted] }
        try await eventually(timeout: .seconds(30)) { readiness.heldApps == nil }
        XCTAssertNotNil(cache.state.token)

        // Refused at a renewal, while the token in hand is still good.
        await server.stop()
        try await server.restart { $0.fcmServiceAccounts = [refusing] }
        try await eventually(timeout: .seconds(30)) { readiness.heldApps?.contains("invalid_grant") == true }
        await server.stop()
        try await server.restart { $0.fcmServiceAccounts = [trusted] }
        try await eventually(timeout: .seconds(30)) { readiness.heldApps == nil }
        await cache.shutdown()
        await server.stop()
    }

    func testAKeyTheEndpointDoesNotKnowIsRefusedAsACredentialProblemNamingClockSkew() async throws {
        let trusted = try ServiceAccountFixture()
        // The same account and key id, another key: what a deleted and re-created key looks like.
        let other = try ServiceAccountFixture(privateKeyID: trusted.privateKeyID)
        let server = try await emulator(trusting: trusted)
        let cache = try cache(other, server: server)
        try await eventually {
            if case .refused = cache.state { return true }
            return false
        }
        guard case .refused(let reason) = cache.state else { return XCTFail("\(cache.state)") }
        XCTAssertTrue(reason.contains("invalid_grant"), reason)
        XCTAssertTrue(reason.contains("Clock skew is the classic cause"), reason)
        XCTAssertEqual(server.emulator.fcmTokens.refusalCount, 1)
        XCTAssertEqual(cache.requestCount, 1, "a refused key is not retried at once")

        // The endpoint itself classifies it, with Google's words.
        let loaded = try ServiceAccount.load(path: try other.writeJSON(tokenURI: server.endpoint + "/token"))
        let grant = TokenEndpoint(uri: loaded.tokenURI, caFile: server.caFile)
            .exchange(assertion: try AssertionSigner(account: loaded).assertion(issuedAt: WallClock.nowSeconds()))
        XCTAssertEqual(grant, .refused(reason: TokenEndpoint.classify(
            status: 400, body: Array(#"{"error":"invalid_grant","error_description":"Invalid JWT Signature."}"#.utf8), uri: loaded.tokenURI).reason))
        await cache.shutdown()
        await server.stop()
    }

    func testShutdownDoesNotWaitForASilentTokenEndpoint() async throws {
        let account = try ServiceAccountFixture()
        let server = try await emulator(trusting: account)
        let proxy = try BlackholeProxy(targetPort: server.emulator.port)
        proxy.blackhole()
        // The emulator's certificate names 127.0.0.1, and so does the proxy's address.
        let loaded = try ServiceAccount.load(path: try account.writeJSON(tokenURI: "https://127.0.0.1:\(proxy.port)/token"))
        let cache = AccessTokenCache(signer: try AssertionSigner(account: loaded),
                                     endpoint: TokenEndpoint(uri: loaded.tokenURI, caFile: server.caFile, timeoutMillis: 120_000))
        try await eventually { cache.requestCount == 1 }
        XCTAssertNil(cache.state.token)
        let started = ContinuousClock.now
        await cache.shutdown()
        // libcurl asks whether to go on at least once a second; the request's own timeout is two minutes.
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(10), "shutdown abandons the hanging request")
        proxy.stop()
        await server.stop()
    }

    func testAnUnreachableEndpointOrA5xxIsWaitedForAndA401IsRefused() {
        let unreachable = TokenEndpoint(uri: "https://127.0.0.1:1/token", timeoutMillis: 5000).exchange(assertion: "x.y.z")
        guard case .unavailable(let reason) = unreachable else { return XCTFail("\(unreachable)") }
        XCTAssertTrue(reason.contains("unreachable"), reason)
        XCTAssertEqual(TokenEndpoint.classify(status: 500, body: [], uri: "u"), .unavailable(reason: "token endpoint u answered HTTP 500"))
        if case .unavailable = TokenEndpoint.classify(status: 429, body: [], uri: "u") {} else { XCTFail("429 waits") }
        if case .refused = TokenEndpoint.classify(status: 401, body: Array(#"{"error":"invalid_client"}"#.utf8), uri: "u") {} else {
            XCTFail("401 refuses the key")
        }
        if case .unavailable = TokenEndpoint.classify(status: 200, body: Array("{}".utf8), uri: "u") {} else {
            XCTFail("200 without a token is the server's fault")
        }
        XCTAssertEqual(TokenEndpoint.classify(status: 200, body: Array(#"{"access_token":"t","expires_in":99999999999999999999}"#.utf8), uri: "u"),
                       .granted(accessToken: Secret("t"), expiresIn: 3600), "an absurd expires_in is not trusted")
    }
}

extension TokenGrant {
    var reason: String {
        switch self {
        case .granted: return ""
        case .unavailable(let reason), .refused(let reason): return reason
        }
    }
}
