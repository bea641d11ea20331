import PushEmulator
import Foundation
import PushCore


/// The APNs emulator, in the test process on a free loopback port, set up the way the tests expect:
/// it knows one signing key (`keyFile`, Key ID ABC123DEFG, Team ID DEF123GHIJ) and answers by the
/// device token's first four hex digits (`410a…` Unregistered, `5030…` 503, …); other tokens get 200.
public final class EmulatorStandIn: @unchecked Sendable {
    public static let keyID = "ABC123DEFG"
    public static let teamID = "DEF123GHIJ"
    public static let scripted: [EmulatorConfiguration.ScriptedAnswer] = [
        .init(prefix: "410a", status: 410, reason: "Unregistered", timestamp: 1_700_000_000_000),
        .init(prefix: "410e", status: 410, reason: "ExpiredToken"),
        .init(prefix: "400b", status: 400, reason: "BadDeviceToken"),
        .init(prefix: "400d", status: 400, reason: "DeviceTokenNotForTopic"),
        .init(prefix: "400c", status: 400, reason: "BadCollapseId"),
        .init(prefix: "4130", status: 413, reason: "PayloadTooLarge"),
        .init(prefix: "403b", status: 403, reason: "InvalidProviderToken"),
        .init(prefix: "4030", status: 403, reason: "ExpiredProviderToken"),
        .init(prefix: "4290", status: 429, reason: "TooManyRequests"),
        .init(prefix: "4291", status: 429, reason: "TooManyProviderTokenUpdates"),
        .init(prefix: "5000", status: 500, reason: "InternalServerError"),
        .init(prefix: "5030", status: 503, reason: "ServiceUnavailable"),
    ]

    public let directory: String
    public let keyFile: String
    public private(set) var emulator: PushEmulator
    private var configuration: EmulatorConfiguration
    private let log = AnswerLog()

    /// - Parameters:
    ///   - goawayAfter: send GOAWAY after this many requests per connection.
    ///   - clientCA: require client certificates signed by this CA (certificate auth).
    public init(goawayAfter: Int? = nil, clientCA: String? = nil, adjust: (inout EmulatorConfiguration) -> Void = { _ in }) async throws {
        directory = makeTemporaryDirectory("apns")
        keyFile = try generateP8Key(in: directory)
        var configuration = EmulatorConfiguration()
        configuration.port = 0
        configuration.caOutputFile = directory + "/ca.pem"
        configuration.keys = [.init(keyID: Self.keyID, teamID: Self.teamID, keyFile: keyFile)]
        configuration.scripted = Self.scripted
        configuration.goawayAfterStreams = goawayAfter
        configuration.clientCAFile = clientCA
        let log = self.log
        configuration.onAnswer = { token, answer in log.append(token, answer.status) }
        adjust(&configuration)
        if configuration.certificateFile == nil {
            // Its identity on files, so that a restart on the same port is the same server to clients.
            let identity = try SelfSignedCertificate.generate()
            try identity.certificatePEM.write(toFile: directory + "/server.pem", atomically: true, encoding: .utf8)
            try identity.privateKeyPEM.write(toFile: directory + "/server-key.pem", atomically: true, encoding: .utf8)
            configuration.certificateFile = directory + "/server.pem"
            configuration.privateKeyFile = directory + "/server-key.pem"
        }
        emulator = try PushEmulator(configuration: configuration)
        try await emulator.start()
        configuration.port = emulator.port
        // A restart binds the same FCM port too.
        if configuration.fcmPort != nil { configuration.fcmPort = emulator.fcmPort }
        self.configuration = configuration
    }

    /// Starts it again after `stop()`, on the same port with the same certificate and keys: APNs back after
    /// an outage.
    /// `adjust` changes its configuration from then on (a key revoked or restored, say).
    public func restart(adjust: (inout EmulatorConfiguration) -> Void = { _ in }) async throws {
        adjust(&configuration)
        emulator = try PushEmulator(configuration: configuration)
        try await emulator.start()
    }

    /// The signing key this stand-in trusts (the one in `keyFile`).
    public var trustedKey: EmulatorConfiguration.ProviderKey {
        .init(keyID: Self.keyID, teamID: Self.teamID, keyFile: keyFile)
    }

    public var endpoint: String { emulator.endpoint }
    public var caFile: String { directory + "/ca.pem" }

    /// Every request answered so far: (token, status).
    public func answered() -> [(token: String, status: Int)] { log.all }
    /// How many answers so far, and how many with one status: cheap enough to poll (no copy of the log).
    public var answeredCount: Int { log.count }
    public func answeredCount(status: Int) -> Int { log.count(status: status) }
    /// The answers after the first `start`: a poller that keeps its own tallies reads each answer once.
    public func answered(from start: Int) -> [(token: String, status: Int)] { log.from(start) }

    public func stop() async {
        try? await emulator.stop()
    }
}

final class AnswerLog: Sendable {
    private struct Entries {
        var answers: [(token: String, status: Int)] = []
        var perStatus: [Int: Int] = [:]
    }
    private let entries = Locked(Entries())
    func append(_ token: String, _ status: Int) {
        entries.withLock {
            $0.answers.append((token, status))
            $0.perStatus[status, default: 0] += 1
        }
    }
    var all: [(token: String, status: Int)] { entries.withLock { $0.answers } }
    var count: Int { entries.withLock { $0.answers.count } }
    func count(status: Int) -> Int { entries.withLock { $0.perStatus[status] ?? 0 } }
    func from(_ start: Int) -> [(token: String, status: Int)] {
        entries.withLock { Array($0.answers[min(max(0, start), $0.answers.count)...]) }
    }
}

extension EmulatorStandIn {
    /// The environment that points a `worker` at `redis` and this emulator, with one app (com.example.chat)
    /// signing with the emulator's key; `extra` adds or overrides keys.
    public func workerEnvironment(redis: RedisServer, _ extra: [String: String] = [:]) -> [String: String] {
        workerEnvironment(redisURL: redis.urlString, extra)
    }

    /// The same for any `redis.url` (a cluster node, or a placeholder when Sentinel names the primary).
    public func workerEnvironment(redisURL: String, _ extra: [String: String] = [:]) -> [String: String] {
        var environment = [
            "REDIS_URL": redisURL, "APNS_ENDPOINT": endpoint, "APNS_CA_FILE": caFile,
            "APNS_APPS_0_TOPIC": "com.example.chat", "APNS_APPS_0_TEAM_ID": Self.teamID,
            "APNS_APPS_0_KEY_ID": Self.keyID, "APNS_APPS_0_KEY_FILE": keyFile,
        ]
        environment.merge(extra) { $1 }
        return environment
    }
}
