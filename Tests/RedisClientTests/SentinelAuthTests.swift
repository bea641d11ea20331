import Foundation
import PushCore
import RedisClient
import TestSupport
import XCTest

/// Sentinels protected by `requirepass` (and an ACL user of theirs): the worker's connection, made from the
/// configuration as the worker makes it (`RedisConnector`), authenticates to each sentinel with
/// `redis.sentinel.password` (and `username`), apart from the data nodes' password in `redis.url`.
final class SentinelAuthTests: XCTestCase {
    private static let password = "sentinel-s3cret"
    private static let user = (name: "watcher", password: "watcher-pw")

    private func connection(_ servers: RedisSentinelServers, _ environment: [String: String]) throws -> (any RedisCommands, WorkerConfiguration) {
        // redis.url's host:port lead nowhere: with Sentinel only its password, database and TLS are used.
        let configuration = try ConfigurationLoader(environment: [
            "REDIS_URL": "redis://127.0.0.1:1/0", "REDIS_SENTINEL_MASTER": servers.master,
            "REDIS_SENTINEL_NODES": servers.settings.nodes.joined(separator: ","),
        ].merging(environment) { $1 }).load(yaml: "")
        let connection = RedisConnector.connection(configuration.redis, shard: "push", name: "auth", socketTimeout: .seconds(3))
        addTeardownBlock { await connection.close() }
        return (connection, configuration)
    }

    private func failure(_ connection: any RedisCommands) async -> String {
        do {
            let reply = try await connection.execute(["PING"])
            return "answered \(reply)"
        } catch {
            return "\(error)"
        }
    }

    func testThePasswordFindsThePrimaryAndItsLackIsAClearError() async throws {
        let servers = try await RedisSentinelServers(password: Self.password, user: Self.user)
        addTeardownBlock { await servers.stop() }

        let (withPassword, configuration) = try connection(servers, ["REDIS_SENTINEL_PASSWORD": Self.password])
        try await withPassword.execute(["SET", "k", "v"])
        XCTAssertEqual((withPassword as? SentinelConnection)?.currentPrimary, "127.0.0.1:\(servers.primary.port)")
        // Never shown: the configuration as printed and dumped, and the connection.
        var dumped = ""
        dump(configuration, to: &dumped)
        for text in [configuration.description, String(reflecting: configuration), dumped, "\(withPassword)"] {
            XCTAssertFalse(text.contains(Self.password), text)
        }
        XCTAssertTrue(configuration.summaryLines.contains("redis.sentinel.password: ***"), configuration.description)

        let (asUser, _) = try connection(servers, ["REDIS_SENTINEL_USERNAME": Self.user.name, "REDIS_SENTINEL_PASSWORD": Self.user.password])
        try await assertEqual(try await asUser.execute(["GET", "k"]).string, "v")

        let (without, _) = try connection(servers, [:])
        let missing = await failure(without)
        XCTAssertTrue(missing.contains("no sentinel names a primary for \(servers.master)") && missing.contains("NOAUTH")
                      && missing.contains("redis.sentinel.password"), missing)
        let (wrong, _) = try connection(servers, ["REDIS_SENTINEL_PASSWORD": "not-it"])
        let refused = await failure(wrong)
        XCTAssertTrue(refused.contains("WRONGPASS") && refused.contains("redis.sentinel.password"), refused)
        XCTAssertFalse(refused.contains("not-it"), refused)
    }
}
