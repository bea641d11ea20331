import APNsProvider
@testable import FCMProvider
import HonorProvider
import HuaweiProvider
import OPPOProvider
import PushCore
import TestSupport
import VivoProvider
import XCTest
import XiaomiProvider

final class ConfigurationTests: XCTestCase {
    /// Each provider's block is its module's: every module registered, as the worker registers them, before a
    /// configuration is read.
    override class func setUp() {
        super.setUp()
        _ = APNsModule.provider
        _ = PushProvider.fcm
        _ = HuaweiModule.provider
        _ = XiaomiModule.provider
        _ = HonorModule.provider
        _ = OPPOModule.provider
        _ = VivoModule.provider
    }

    /// The example file's vendor blocks load as each vendor's module reads them, and the environment wins.
    func testTheExamplesVendorBlocksLoad() throws {
        let yaml = try String(contentsOfFile: repositoryRoot() + "/config/worker.example.yaml", encoding: .utf8)
        let config = try ConfigurationLoader(environment: ["XIAOMI_APPS_0_REQUESTS_PER_S": "500"]).load(yaml: yaml)
        let huawei = try HuaweiModule(block: try XCTUnwrap(config.providerBlocks["huawei"])).settings
        XCTAssertEqual(huawei.apps.map(\.topic), ["com.example.chat"])
        XCTAssertEqual(huawei.apps.first?.category, "IM")
        XCTAssertEqual(huawei.apps.first?.tokensPerSecond, 6000)
        let xiaomi = try XiaomiModule(block: try XCTUnwrap(config.providerBlocks["xiaomi"])).settings
        XCTAssertEqual(xiaomi.apps.map(\.topic), ["com.example.chat"])
        XCTAssertEqual(xiaomi.apps.first?.requestsPerSecond, 500)
        XCTAssertEqual(xiaomi.maxConnections, 64)
        let honor = try HonorModule(block: try XCTUnwrap(config.providerBlocks["honor"])).settings
        XCTAssertEqual(honor.apps.first?.importance, "NORMAL")
        let oppo = try OPPOModule(block: try XCTUnwrap(config.providerBlocks["oppo"])).settings
        XCTAssertEqual(oppo.apps.first?.notifyLevel, 2)
        let vivo = try VivoModule(block: try XCTUnwrap(config.providerBlocks["vivo"])).settings
        XCTAssertEqual(vivo.apps.first?.classification, 1)
    }

    func testDefaultsNeedNoFile() throws {
        let config = try ConfigurationLoader(environment: [:]).load(yaml: "")
        XCTAssertEqual(config.redis.url, RedisURL(host: "127.0.0.1", port: 6379, database: 0))
        XCTAssertEqual(config.redis.prefix, "push")
        XCTAssertEqual(config.collector.windowMillis, 150)
        XCTAssertEqual(config.collector.batch.private, 100)
        XCTAssertEqual(config.collector.batch.group, 500)
        XCTAssertEqual(config.collector.batch.system, 100)
        XCTAssertEqual(config.collector.maxInFlight, 20_000)
        XCTAssertEqual(try config.apns.endpoint, .production)
        XCTAssertEqual(config.retry.maxAttempts, 20)
        XCTAssertEqual(try config.apns.maxConnections, 16)
        XCTAssertEqual(try config.apns.transport, "nghttp2")
        XCTAssertEqual(try config.apns.pingIntervalMillis, 30_000)
        XCTAssertEqual(config.shutdown.timeoutSeconds, 25)
    }

    func testTheTransportIsChosenByNameAndAMisspellingIsNamed() throws {
        let config = try ConfigurationLoader(environment: ["APNS_TRANSPORT": "libcurl", "APNS_PING_INTERVAL_MS": "5000"]).load(yaml: "")
        XCTAssertEqual(try config.apns.transport, "libcurl")
        XCTAssertEqual(try config.apns.pingIntervalMillis, 5000)
        XCTAssertThrowsError(try ConfigurationLoader(environment: [:]).load(yaml: "apns:\n  transport: nghttp\n").apns) {
            XCTAssertEqual($0 as? ConfigurationError, .invalid(key: "apns.transport", reason: "'nghttp' is not nghttp2 or libcurl"))
        }
    }

    /// `redis.wait_replicas` is off unless asked for, from YAML or the environment, and bounded.
    func testAcknowledgementsWaitForReplicasOnlyWhenAsked() throws {
        let plain = try ConfigurationLoader(environment: [:]).load(yaml: "")
        XCTAssertEqual(plain.redis.waitReplicas, 0)
        XCTAssertEqual(plain.redis.waitTimeoutMillis, 100)
        let asked = try ConfigurationLoader(environment: ["REDIS_WAIT_TIMEOUT_MS": "250"]).load(yaml: "redis:\n  wait_replicas: 1\n")
        XCTAssertEqual(asked.redis.waitReplicas, 1)
        XCTAssertEqual(asked.redis.waitTimeoutMillis, 250)
        XCTAssertThrowsError(try ConfigurationLoader(environment: ["REDIS_WAIT_REPLICAS": "-1"]).load(yaml: "")) {
            XCTAssertEqual($0 as? ConfigurationError, .invalid(key: "redis.wait_replicas", reason: "must be at least 0"))
        }
        XCTAssertThrowsError(try ConfigurationLoader(environment: [:]).load(yaml: "redis:\n  wait_timeout_ms: 0\n")) {
            XCTAssertEqual($0 as? ConfigurationError, .invalid(key: "redis.wait_timeout_ms", reason: "must be at least 1"))
        }
    }

    /// docs/configuration.md: a short outage dead-letters nothing; the default budget spans several minutes.
    func testTheDefaultRetryBudgetSpansMinutes() {
        let retry = RetrySettings()
        for _ in 0..<20 {
            let total = (1..<retry.maxAttempts).reduce(0) { $0 + retry.delayMillis(afterAttempt: $1) }
            XCTAssertGreaterThanOrEqual(total, 195_000, "at least 3 minutes 15 s between the first and the last attempt")
            XCTAssertLessThanOrEqual(total, 381_000, "and at most 6.4 minutes")
        }
    }

    func testSpecExampleLoadsAndEnvironmentWins() throws {
        let yaml = try String(contentsOfFile: repositoryRoot() + "/config/worker.example.yaml", encoding: .utf8)
        let config = try ConfigurationLoader(environment: [
            "REDIS_URL": "redis://:secret@10.1.2.3:6380/2",
            "APNS_ENDPOINT": "https://127.0.0.1:8443",
            "COLLECTOR_BATCH_GROUP": "50",
            "APNS_APPS_0_KEY_ID": "ZZZ123DEFG",
        ]).load(yaml: yaml)
        XCTAssertEqual(config.redis.url.host, "10.1.2.3")
        XCTAssertEqual(config.redis.url.port, 6380)
        XCTAssertEqual(config.redis.url.database, 2)
        XCTAssertEqual(config.redis.url.password, "secret")
        XCTAssertEqual(try config.apns.endpoint, .custom("https://127.0.0.1:8443"))
        XCTAssertEqual(config.collector.batch.group, 50)
        XCTAssertEqual(try config.apns.apps.count, 2)
        XCTAssertEqual(try config.apns.apps[0].credential, .token(teamID: "DEF123GHIJ", keyID: "ZZZ123DEFG", keyFile: "AuthKey_ABC123DEFG.p8"))
        XCTAssertEqual(try config.apns.apps[1].credential, .certificate(file: "legacy.p12", password: ""))
    }

    /// `receipts.listen`: off by default, from the file or the environment, and a bad address names its key.
    func testTheReceiptsListenerIsOffUnlessAnAddressIsGiven() throws {
        XCTAssertEqual(try ConfigurationLoader(environment: [:]).load(yaml: "").receiptsListen, "")
        XCTAssertEqual(try ConfigurationLoader(environment: [:]).load(yaml: "receipts:\n  listen: 0.0.0.0:9465\n").receiptsListen, "0.0.0.0:9465")
        XCTAssertEqual(try ConfigurationLoader(environment: ["RECEIPTS_LISTEN": "[::1]:9465"]).load(yaml: "").receiptsListen, "[::1]:9465")
        XCTAssertThrowsError(try ConfigurationLoader(environment: ["RECEIPTS_LISTEN": "9465"]).load(yaml: "")) {
            XCTAssertEqual(($0 as? ConfigurationError).map { "\($0)" }?.hasPrefix("configuration receipts.listen:"), true, "\($0)")
        }
    }

    /// docs/configuration.md's `fcm` block: from the example file, each key overridable, FCM apps from the environment.
    func testTheFCMBlockLoadsAndTheEnvironmentWins() throws {
        let yaml = try String(contentsOfFile: repositoryRoot() + "/config/worker.example.yaml", encoding: .utf8)
        let config = try ConfigurationLoader(environment: [
            "FCM_ENDPOINT": "https://127.0.0.1:9443/", "FCM_CONNECTIONS": "3", "FCM_APPS_0_PROJECT_ID": "demo-project",
            "FCM_APPS_1_TOPIC": "com.example.other", "FCM_APPS_1_SERVICE_ACCOUNT_FILE": "/keys/other.json",
        ]).load(yaml: yaml)
        XCTAssertEqual(try config.fcmSettings().endpoint, "https://127.0.0.1:9443")
        XCTAssertEqual(try config.fcmSettings().connections, 3)
        XCTAssertEqual(try config.fcmSettings().maxConnections, 16)
        XCTAssertEqual(try config.fcmSettings().apps, [
            FCMApp(topic: "com.example.chat", serviceAccountFile: "firebase-service-account.json", projectID: "demo-project"),
            FCMApp(topic: "com.example.other", serviceAccountFile: "/keys/other.json"),
        ])
        XCTAssertFalse(try ConfigurationLoader(environment: [:]).load(yaml: "").fcmSettings().isEnabled, "no apps: FCM is off")
    }

    func testFCMMistakesAreNamed() {
        let loader = ConfigurationLoader(environment: [:])
        XCTAssertThrowsError(try loader.load(yaml: "fcm:\n  endpoint: http://fcm.example\n").fcmSettings()) {
            XCTAssertEqual($0 as? ConfigurationError, .invalid(key: "fcm.endpoint", reason: "'http://fcm.example' is not https://host[:port]"))
        }
        XCTAssertThrowsError(try loader.load(yaml: "fcm:\n  apps:\n    - topic: a.b\n").fcmSettings()) {
            XCTAssertEqual($0 as? ConfigurationError, .invalid(key: "fcm.apps.0.service_account_file", reason: "is required (the service account's JSON key file)"))
        }
        XCTAssertThrowsError(try loader.load(yaml: "fcm:\n  apps:\n    - topic: a.b\n      service_account_file: x.json\n      project_id: a/b\n").fcmSettings()) {
            XCTAssertEqual($0 as? ConfigurationError, .invalid(key: "fcm.apps.0.project_id", reason: "'a/b' is not a project id (letters, digits, dashes)"))
        }
        XCTAssertThrowsError(try loader.load(yaml: "fcm:\n  apps:\n    - topic: a.b\n      key_file: x.p8\n").fcmSettings()) {
            XCTAssertEqual($0 as? ConfigurationError, .unknownKey("fcm.apps.0.key_file"))
        }
    }

    /// `fcm.token_uri` receives signed assertions and hands out access tokens: https, or plain http to loopback only
    /// (tests, a local emulator).
    func testTheTokenURIIsHTTPSOrPlainHTTPToLoopbackOnly() throws {
        func load(_ uri: String) throws -> String {
            try ConfigurationLoader(environment: ["FCM_TOKEN_URI": uri]).load(yaml: "").fcmSettings().tokenURI
        }
        for uri in ["https://oauth2.googleapis.com/token", "http://127.0.0.1:8080/token", "http://127.9.8.7/token",
                    "http://[::1]:9443/token", "http://localhost:9443/token", "HTTP://LOCALHOST/token"] {
            XCTAssertEqual(try load(uri), uri)
        }
        for uri in ["http://oauth2.googleapis.com/token", "http://127.0.0.1.attacker.example/token", "http://127.0.0.1@attacker.example/token",
                    "http://10.0.0.1/token", "http://[::2]/token"] {
            XCTAssertThrowsError(try load(uri), uri) {
                XCTAssertEqual($0 as? ConfigurationError, .invalid(key: "fcm.token_uri", reason: "'\(uri)' is plain http: use https (http only to this machine: 127.0.0.0/8, ::1, localhost)"))
            }
        }
        XCTAssertThrowsError(try load("ftp://127.0.0.1/token")) {
            XCTAssertEqual($0 as? ConfigurationError, .invalid(key: "fcm.token_uri", reason: "'ftp://127.0.0.1/token' is not an https URL"))
        }
    }

    func testAppsCanComeFromTheEnvironmentAlone() throws {
        let config = try ConfigurationLoader(environment: [
            "APNS_APPS_0_TOPIC": "com.example.env", "APNS_APPS_0_TEAM_ID": "TEAM123456",
            "APNS_APPS_0_KEY_ID": "KEY1234567", "APNS_APPS_0_KEY_FILE": "/keys/a.p8",
        ]).load(yaml: "")
        XCTAssertEqual(try config.apns.apps, [APNsApp(topic: "com.example.env", credential: .token(teamID: "TEAM123456", keyID: "KEY1234567", keyFile: "/keys/a.p8"))])
    }

    func testMistakesAreNamed() {
        let loader = ConfigurationLoader(environment: [:])
        XCTAssertThrowsError(try loader.load(yaml: "redis:\n  ulr: x\n")) {
            XCTAssertEqual($0 as? ConfigurationError, .unknownKey("redis.ulr"))
        }
        XCTAssertThrowsError(try loader.load(yaml: "collector:\n  window_ms: soon\n")) {
            XCTAssertEqual($0 as? ConfigurationError, .invalid(key: "collector.window_ms", reason: "'soon' is not a whole number"))
        }
        XCTAssertThrowsError(try loader.load(yaml: "apns:\n  endpoint: ftp://x\n").apns)
        XCTAssertThrowsError(try loader.load(yaml: "apns:\n  apps:\n    - topic: a.b\n").apns) {
            XCTAssertEqual($0 as? ConfigurationError, .invalid(key: "apns.apps.0", reason: "needs key_file with team_id and key_id, or cert_file"))
        }
        XCTAssertThrowsError(try ConfigurationLoader(environment: ["REDIS_URL": "http://x"]).load(yaml: ""))
    }

    /// docs/configuration.md and docs/queue-protocol.md: several addresses of one cluster in redis.url, and Sentinel.
    func testClusterAddressesAndSentinelKeys() throws {
        let yaml = """
            redis:
              url: "redis://:s3cret,pw@10.0.0.1:6379, 10.0.0.2:6380,10.0.0.3/0"
              shards: ["push:{0}", "push:{1}"]
            """
        let cluster = try ConfigurationLoader(environment: [:]).load(yaml: yaml).redis
        XCTAssertEqual(cluster.seeds.map { "\($0.host):\($0.port)" }, ["10.0.0.1:6379", "10.0.0.2:6380", "10.0.0.3:6379"])
        XCTAssertEqual(cluster.seeds.map { $0.password?.value }, ["s3cret,pw", "s3cret,pw", "s3cret,pw"], "one password for every node")
        XCTAssertEqual(cluster.url.host, "10.0.0.1")
        XCTAssertEqual(cluster.shownAddress, "redis://:***@10.0.0.1:6379,10.0.0.2:6380,10.0.0.3:6379/0")
        // One address parses as before.
        XCTAssertEqual(try ConfigurationLoader(environment: ["REDIS_URL": "redis://h:7000/2"]).load(yaml: "").redis.seeds,
                       [try RedisURL(parsing: "redis://h:7000/2")])

        let sentinel = try ConfigurationLoader(environment: [
            "REDIS_URL": "rediss://app:pw@ignored:1/3", "REDIS_SENTINEL_MASTER": "queue",
            "REDIS_SENTINEL_NODES": "10.0.0.5:26379, [::1]:26380",
        ]).load(yaml: "").redis
        XCTAssertEqual(sentinel.sentinel.master, "queue")
        XCTAssertEqual(sentinel.sentinel.nodes, ["10.0.0.5:26379", "[::1]:26380"])
        XCTAssertEqual(sentinel.sentinel.addresses.map(\.host), ["10.0.0.5", "::1"])
        XCTAssertEqual(sentinel.url.database, 3)
        XCTAssertTrue(sentinel.url.tls)
        let fromFile = try ConfigurationLoader(environment: [:]).load(yaml: """
            redis:
              sentinel: { master: queue, nodes: ["a:26379", "b:26379"] }
            """)
        XCTAssertEqual(fromFile.redis.sentinel.nodes, ["a:26379", "b:26379"])
        let summary = fromFile.summaryLines.joined(separator: "\n")
        XCTAssertTrue(summary.contains("redis.sentinel.master: queue"), summary)
        XCTAssertTrue(summary.contains("redis.sentinel.nodes: a:26379,b:26379"), summary)
        let clusterSummary = try ConfigurationLoader(environment: [:]).load(yaml: yaml).summaryLines.joined(separator: "\n")
        XCTAssertFalse(clusterSummary.contains("s3cret"), clusterSummary)

        let loader = ConfigurationLoader(environment: [:])
        for (bad, key) in [
            ("redis: { url: \"redis://a:1,b:2/0\" }", "redis.url"),                           // a cluster without shards
            ("redis: { url: \"redis://:pw@a:1,redis://b:2/0\", shards: [\"p:{0}\"] }", "redis.url"),  // full URLs
            ("redis: { url: \"redis://:pw@a:1,,b:2/0\", shards: [\"p:{0}\"] }", "redis.url"),
            ("redis: { sentinel: { master: m } }", "redis.sentinel"),
            ("redis: { sentinel: { nodes: [\"a:1\"] } }", "redis.sentinel"),
            ("redis: { sentinel: { master: m, nodes: [\"a\"] } }", "redis.sentinel.nodes"),
            ("redis: { sentinel: { master: m, nodes: [\"a:1\"], username: u } }", "redis.sentinel.username"),  // no password
            ("redis: { sentinel: { password: pw } }", "redis.sentinel.password"),                       // no Sentinel
        ] {
            XCTAssertThrowsError(try loader.load(yaml: bad), bad) { error in
                guard case .invalid(let named, let reason) = error as? ConfigurationError else { return XCTFail("\(error)") }
                XCTAssertEqual(named, key, bad)
                XCTAssertFalse(reason.contains("pw@"), reason)
            }
        }
    }

    /// `redis.sentinel.password` and `.username`: the sentinels' own credentials, from the file or the environment,
    /// kept apart from redis.url's and shown as `***`.
    func testTheSentinelsOwnCredentials() throws {
        let yaml = """
            redis:
              url: "redis://:data-pw@ignored:1/0"
              sentinel: { master: queue, nodes: ["a:26379"], username: watcher, password: file-pw }
            """
        let fromFile = try ConfigurationLoader(environment: [:]).load(yaml: yaml)
        XCTAssertEqual(fromFile.redis.sentinel.username, "watcher")
        XCTAssertEqual(fromFile.redis.sentinel.password?.value, "file-pw")
        XCTAssertEqual(fromFile.redis.url.password?.value, "data-pw", "the data nodes' password stays redis.url's")
        XCTAssertTrue(fromFile.summaryLines.contains("redis.sentinel.username: watcher"), fromFile.description)
        XCTAssertTrue(fromFile.summaryLines.contains("redis.sentinel.password: ***"), fromFile.description)
        XCTAssertFalse(fromFile.description.contains("file-pw"), fromFile.description)
        let fromEnvironment = try ConfigurationLoader(environment: ["REDIS_SENTINEL_PASSWORD": "env-pw", "REDIS_SENTINEL_USERNAME": "other"])
            .load(yaml: yaml).redis.sentinel
        XCTAssertEqual(fromEnvironment.password?.value, "env-pw")
        XCTAssertEqual(fromEnvironment.username, "other")
        XCTAssertNil(try ConfigurationLoader(environment: [:]).load(yaml: "").redis.sentinel.password)
    }

    func testRetryDelaysGrowAndStayWithinBounds() {
        var retry = RetrySettings()
        retry.baseDelayMillis = 100
        retry.maxDelayMillis = 1000
        for _ in 0..<200 {
            XCTAssertEqual(retry.delayMillis(afterAttempt: 1), 100)
            XCTAssert((100...400).contains(retry.delayMillis(afterAttempt: 3)))
            XCTAssert((100...1000).contains(retry.delayMillis(afterAttempt: 30)))
        }
    }

    func testShardsFromYAMLOrTheEnvironmentAndTheNewQueueKeys() throws {
        let yaml = """
        redis:
          shards: ["push:{0}", "push:{1}"]
        recovery:
          max_deliveries: 5
        collector:
          max_in_flight_bytes: 2097152
          max_element_bytes: 65536
        """
        let fromFile = try ConfigurationLoader(environment: [:]).load(yaml: yaml)
        XCTAssertEqual(fromFile.redis.prefixes, ["push:{0}", "push:{1}"])
        XCTAssertEqual(fromFile.recovery.maxDeliveries, 5)
        XCTAssertEqual(fromFile.collector.maxInFlightBytes, 2_097_152)
        XCTAssertEqual(fromFile.collector.maxElementBytes, 65_536)
        let fromEnvironment = try ConfigurationLoader(environment: ["REDIS_SHARDS": "a:{x}, b:{y}"]).load(yaml: yaml)
        XCTAssertEqual(fromEnvironment.redis.prefixes, ["a:{x}", "b:{y}"])
        XCTAssertEqual(try ConfigurationLoader(environment: [:]).load(yaml: "").redis.prefixes, ["push"])
        XCTAssertThrowsError(try ConfigurationLoader(environment: ["REDIS_SHARDS": "a,a"]).load(yaml: ""))
        XCTAssertThrowsError(try ConfigurationLoader(environment: ["RECOVERY_MAX_DELIVERIES": "0"]).load(yaml: ""))
        XCTAssertThrowsError(try ConfigurationLoader(environment: ["RETRY_BASE_DELAY_MS": "99999999999"]).load(yaml: "")) {
            XCTAssertEqual("\($0)", "configuration retry.base_delay_ms: must be at most 2147483647")
        }
    }
}

extension WorkerConfiguration {
    /// The `apns` block as the worker reads it: by its module.
    var apns: APNsSettings {
        get throws { try APNsModule(block: providerBlocks["apns"] ?? ConfigurationBlock(name: "apns")).settings }
    }
}
