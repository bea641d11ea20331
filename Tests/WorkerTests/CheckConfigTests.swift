@testable import FCMProvider
import Foundation
import PushCore
import QueueProtocol
import RedisClient
import TestSupport
import XCTest

/// `worker check-config` loads everything the worker would and exits 1 naming what is wrong.
final class CheckConfigTests: XCTestCase {
    var directory: String!
    var keyFile: String!

    override func setUp() async throws {
        directory = makeTemporaryDirectory("check-config")
        keyFile = try generateP8Key(in: directory)
        chmod(keyFile, 0o600)
    }

    private func checkConfig(_ environment: [String: String], _ arguments: [String] = []) async throws -> (status: Int32?, output: String) {
        var env = [
            "APNS_APPS_0_TOPIC": "com.example.chat", "APNS_APPS_0_TEAM_ID": "DEF123GHIJ",
            "APNS_APPS_0_KEY_ID": "ABC123DEFG", "APNS_APPS_0_KEY_FILE": keyFile!,
        ]
        env.merge(environment) { $1 }
        let process = try WorkerProcess(environment: env, arguments: ["check-config", "--redis-timeout", "2"] + arguments,
                                        logFile: "\(directory!)/check-\(UUID().uuidString.prefix(6)).log")
        let status = await process.waitForExit(timeout: 30)
        return (status, process.log)
    }

    func testAGoodConfigurationPassesEveryCheck() async throws {
        let redis = try RedisServer()
        defer { redis.kill() }
        let result = try await checkConfig(["REDIS_URL": redis.urlString])
        XCTAssertEqual(result.status, 0, result.output)
        XCTAssertTrue(result.output.contains("ok   apns.apps.0 (com.example.chat): key \(keyFile!) loaded, JWT signed"), result.output)
        XCTAssertTrue(result.output.contains("ok   redis.url: redis://127.0.0.1:\(redis.port)/0: connected"), result.output)
        XCTAssertTrue(result.output.contains("configuration OK"))
        XCTAssertFalse(result.output.contains("warn"), "a 0600 key is not a warning")
        // Every provider's effective settings, as its module reads its block, defaults included.
        for line in [
            "apns.endpoint: https://api.push.apple.com", "apns.apps.0: com.example.chat, token auth, team_id DEF123GHIJ, key_id ABC123DEFG, key_file \(keyFile!)",
            "fcm.endpoint: https://fcm.googleapis.com", "huawei.endpoint: https://push-api.cloud.huawei.com",
            "huawei.token_uri: https://oauth-login.cloud.huawei.com/oauth2/v3/token", "xiaomi.quota_reset: 00:00+08:00",
        ] {
            XCTAssertTrue(result.output.contains("\n\(line)\n"), "\(line)\n\(result.output)")
        }
    }

    /// docs/tools.md: check-config loads every FCM service account, signs an assertion and gets an access token,
    /// and says exactly what is wrong when it cannot (a missing file, a key the token endpoint refuses).
    func testFCMServiceAccountsAreLoadedSignedAndExchanged() async throws {
        let redis = try RedisServer()
        defer { redis.kill() }
        let fcm = try await FCMStandIn()
        let stranger = try ServiceAccountFixture(privateKeyID: "ffffffffffffffffffffffffffffffffffffffff")
        let strangerFile = try stranger.writeJSON(tokenURI: fcm.emulator.endpoint + "/token")
        chmod(fcm.serviceAccountFile, 0o600)
        chmod(strangerFile, 0o600)
        let base = ["REDIS_URL": redis.urlString, "FCM_CA_FILE": fcm.apns.caFile, "FCM_APPS_0_TOPIC": "com.example.chat"]
        let good = try await checkConfig(base.merging(["FCM_APPS_0_SERVICE_ACCOUNT_FILE": fcm.serviceAccountFile]) { $1 })
        XCTAssertEqual(good.status, 0, good.output)
        XCTAssertTrue(good.output.contains("ok   fcm.ca_file: \(fcm.apns.caFile): readable"), good.output)
        XCTAssertTrue(good.output.contains("ok   fcm.apps.0 (com.example.chat): service account \(ServiceAccountFixture.clientEmail) (project \(ServiceAccountFixture.projectID)) loaded, assertion signed, access token granted"), good.output)

        let refused = try await checkConfig(base.merging(["FCM_APPS_0_SERVICE_ACCOUNT_FILE": strangerFile]) { $1 })
        XCTAssertEqual(refused.status, 1, refused.output)
        XCTAssertTrue(refused.output.contains("FAIL fcm.apps.0 (com.example.chat): FCM service account \(strangerFile): the token endpoint"), refused.output)
        XCTAssertTrue(refused.output.contains("invalid_grant"), refused.output)

        let missing = try await checkConfig(base.merging(["FCM_APPS_0_SERVICE_ACCOUNT_FILE": "/nonexistent/firebase.json"]) { $1 })
        XCTAssertEqual(missing.status, 1, missing.output)
        XCTAssertTrue(missing.output.contains("FAIL fcm.apps.0 (com.example.chat): FCM service account file /nonexistent/firebase.json"), missing.output)
        XCTAssertFalse(good.output.contains(fcm.account.privateKeyPEM.split(separator: "\n")[1]), "no key material in the output")
        await fcm.stop()
    }

    /// Every provider's `ca_file` is proved readable, the modules' as APNs's (a vendor's was not checked at all).
    func testEachProvidersCAFileIsChecked() async throws {
        let redis = try RedisServer()
        defer { redis.kill() }
        let result = try await checkConfig(["REDIS_URL": redis.urlString, "APNS_CA_FILE": "/nonexistent/apns-ca.pem",
                                            "XIAOMI_CA_FILE": "/nonexistent/mi-ca.pem"])
        XCTAssertEqual(result.status, 1, result.output)
        XCTAssertTrue(result.output.contains("FAIL apns.ca_file: /nonexistent/apns-ca.pem: file not found or not readable"), result.output)
        XCTAssertTrue(result.output.contains("FAIL xiaomi.ca_file: /nonexistent/mi-ca.pem: file not found or not readable"), result.output)
    }

    func testAMissingKeyFileIsAFailureNamingTheFile() async throws {
        let redis = try RedisServer()
        defer { redis.kill() }
        let result = try await checkConfig(["REDIS_URL": redis.urlString, "APNS_APPS_0_KEY_FILE": "/nonexistent/AuthKey_X.p8"])
        XCTAssertEqual(result.status, 1, result.output)
        XCTAssertTrue(result.output.contains("FAIL apns.apps.0 (com.example.chat): APNs key /nonexistent/AuthKey_X.p8: file not found or not readable"),
                      result.output)
    }

    func testAKeyThatIsNotAKeyAndAWrongCertificatePasswordAreNamed() async throws {
        let redis = try RedisServer()
        defer { redis.kill() }
        let notAKey = "\(directory!)/notakey.p8"
        try "hello".write(toFile: notAKey, atomically: true, encoding: .utf8)
        let certificates = try generateClientCertificate(in: directory, password: "right-one")
        let result = try await checkConfig([
            "REDIS_URL": redis.urlString, "APNS_APPS_0_KEY_FILE": notAKey,
            "APNS_APPS_1_TOPIC": "com.example.legacy", "APNS_APPS_1_CERT_FILE": certificates.p12,
            "APNS_APPS_1_CERT_PASSWORD": "wrong-one",
        ])
        XCTAssertEqual(result.status, 1, result.output)
        XCTAssertTrue(result.output.contains("FAIL apns.apps.0 (com.example.chat): APNs key \(notAKey): not a PEM private key"), result.output)
        XCTAssertTrue(result.output.contains("FAIL apns.apps.1 (com.example.legacy): APNs certificate \(certificates.p12): not a PKCS#12 file, or the password (cert_password) is wrong"), result.output)
        XCTAssertTrue(result.output.contains("2 problems found"))
        XCTAssertTrue(result.output.contains("apns.apps.1: com.example.legacy, certificate \(certificates.p12), cert_password ***"), result.output)
        XCTAssertFalse(result.output.contains("wrong-one"), "the certificate password is never printed")
    }

    func testUnreachableOrRefusingRedisIsAFailureWithoutThePassword() async throws {
        let redis = try RedisServer(arguments: ["--requirepass", "the-Secret-pw"])
        defer { redis.kill() }
        let result = try await checkConfig(["REDIS_URL": "redis://:not-the-Secret@127.0.0.1:\(redis.port)/0"])
        XCTAssertEqual(result.status, 1, result.output)
        XCTAssertTrue(result.output.contains("FAIL redis.url: redis://:***@127.0.0.1:\(redis.port)/0:"), result.output)
        XCTAssertTrue(result.output.contains("WRONGPASS"), result.output)
        XCTAssertFalse(result.output.contains("Secret"), result.output)
        let down = try await checkConfig(["REDIS_URL": "redis://127.0.0.1:\(freePort())/0"])
        XCTAssertEqual(down.status, 1, down.output)
        XCTAssertTrue(down.output.contains("Connection refused"), down.output)
    }

    func testAKeyReadableByOthersIsAWarningAndABadFileIsAFailure() async throws {
        let redis = try RedisServer()
        defer { redis.kill() }
        chmod(keyFile, 0o644)
        let result = try await checkConfig(["REDIS_URL": redis.urlString])
        XCTAssertEqual(result.status, 0, "a loose mode is a warning, not a failure:\n\(result.output)")
        XCTAssertTrue(result.output.contains("warn apns.apps.0.key_file \(keyFile!) is readable by everyone (mode 644); chmod 600 it"), result.output)

        let bad = try await checkConfig(["REDIS_URL": redis.urlString, "COLLECTOR_WINDOW_MS": "soon"])
        XCTAssertEqual(bad.status, 1, bad.output)
        XCTAssertTrue(bad.output.contains("FAIL configuration: configuration collector.window_ms: 'soon' is not a whole number"), bad.output)
    }

    /// `--json`: one JSON object, each check with its name, ok and detail, and the verdict; the exit code as in text.
    func testJSONOutputNamesEveryCheckAndTheVerdict() async throws {
        let redis = try RedisServer()
        defer { redis.kill() }
        let good = try await checkConfig(["REDIS_URL": redis.urlString], ["--json"])
        XCTAssertEqual(good.status, 0, good.output)
        let document = jsonObject(good.output)
        XCTAssertEqual(document["ok"] as? Bool, true, good.output)
        let checks = document["checks"] as? [[String: Any]] ?? []
        XCTAssertEqual(checks.map { $0["name"] as? String ?? "" }, ["apns.apps.0 (com.example.chat)", "redis.url"], good.output)
        XCTAssertTrue(checks.allSatisfy { $0["ok"] as? Bool == true }, good.output)
        XCTAssertEqual(checks.last?["detail"] as? String, "redis://127.0.0.1:\(redis.port)/0: connected", good.output)
        XCTAssertEqual(document["warnings"] as? [String], [], good.output)

        let bad = try await checkConfig(["REDIS_URL": redis.urlString, "APNS_APPS_0_KEY_FILE": "/nonexistent/AuthKey_X.p8"], ["--json"])
        XCTAssertEqual(bad.status, 1, bad.output)
        let failed = jsonObject(bad.output)
        XCTAssertEqual(failed["ok"] as? Bool, false, bad.output)
        let app = (failed["checks"] as? [[String: Any]])?.first { $0["name"] as? String == "apns.apps.0 (com.example.chat)" }
        XCTAssertEqual(app?["ok"] as? Bool, false, bad.output)
        XCTAssertEqual(app?["detail"] as? String, "APNs key /nonexistent/AuthKey_X.p8: file not found or not readable", bad.output)

        let unloadable = try await checkConfig(["REDIS_URL": redis.urlString, "COLLECTOR_WINDOW_MS": "soon"], ["--json"])
        XCTAssertEqual(unloadable.status, 1, unloadable.output)
        XCTAssertEqual((jsonObject(unloadable.output)["checks"] as? [[String: Any]])?.first?["name"] as? String, "configuration", unloadable.output)
    }

    /// docs/tools.md: bad usage exits 2 (an unknown flag, a value that is not a number, a shard not configured).
    func testBadUsageExitsTwo() async throws {
        let redis = try RedisServer()
        defer { redis.kill() }
        for arguments in [["--no-such-flag"], ["--redis-timeout", "soon"], ["--shard", "push:{9}"]] {
            let result = try await checkConfig(["REDIS_URL": redis.urlString], arguments)
            XCTAssertEqual(result.status, 2, "\(arguments): \(result.output)")
        }
    }

    /// With `redis.shards`, Redis is checked for each shard (on a cluster each may live on another node), or for
    /// the one `--shard` names.
    func testEachShardIsCheckedOrTheOneNamed() async throws {
        let redis = try RedisServer()
        defer { redis.kill() }
        let all = try await checkConfig(["REDIS_URL": redis.urlString, "REDIS_SHARDS": "push:{0},push:{1}"])
        XCTAssertEqual(all.status, 0, all.output)
        XCTAssertTrue(all.output.contains("ok   redis.url (shard push:{0}): redis://127.0.0.1:\(redis.port)/0: connected"), all.output)
        XCTAssertTrue(all.output.contains("ok   redis.url (shard push:{1}): "), all.output)
        let one = try await checkConfig(["REDIS_URL": redis.urlString, "REDIS_SHARDS": "push:{0},push:{1}"], ["--shard", "push:{1}"])
        XCTAssertEqual(one.status, 0, one.output)
        XCTAssertTrue(one.output.contains("ok   redis.url (shard push:{1}): "), one.output)
        XCTAssertFalse(one.output.contains("shard push:{0}"), one.output)
    }
}
