import Foundation
import PushCore
import RedisClient
import TestSupport
import XCTest

/// Issue 32: `SentinelConnection` checks ROLE every time it takes up the node the sentinels name, not only
/// the first time it meets it. The node here stays the one the sentinels name while it becomes a replica
/// (of another server, whose data differ): a command it would answer is a read from the wrong data set.
/// The sentinels find it down only after a minute, so they go on naming it for the whole test.
final class SentinelRoleTests: XCTestCase {
    private struct Setup {
        let servers: RedisSentinelServers
        let other: RedisServer
        let admin: RedisConnection
    }

    /// The sentinel setup, and another server holding `k` = "theirs".
    private func makeSetup() async throws -> Setup {
        let servers = try await RedisSentinelServers(downAfterMillis: 60_000)
        addTeardownBlock { await servers.stop() }
        let other = try RedisServer()
        addTeardownBlock { other.kill() }
        let otherClient = RedisConnection(url: other.url, name: "other")
        try await otherClient.execute(["SET", "k", "theirs"])
        await otherClient.close()
        let admin = RedisConnection(url: servers.primary.url, name: "admin")
        addTeardownBlock { await admin.close() }
        return Setup(servers: servers, other: other, admin: admin)
    }

    /// Makes the primary the sentinels name a replica of `other`, with its data.
    private func demote(_ setup: Setup) async throws {
        try await setup.admin.execute(["REPLICAOF", "127.0.0.1", String(setup.other.port)])
        try await eventually(timeout: .seconds(20)) {
            let info = try await setup.admin.execute(["INFO", "replication"]).string ?? ""
            return info.contains("master_link_status:up")
        }
        try await assertEqual(try await setup.admin.execute(["GET", "k"]).string, "theirs")
        try await assertEqual(await setup.servers.namedPrimary(), "127.0.0.1:\(setup.servers.primary.port)",
                              "the sentinels still name it")
    }

    func testAfterAConnectionErrorTheSameNodeIsCheckedAgain() async throws {
        let setup = try await makeSetup()
        // Asking the sentinels only after errors: what brings it back to them here is the connection error.
        let client = SentinelConnection(url: RedisURL(host: "127.0.0.1", port: 1), sentinel: setup.servers.settings, name: "role",
                                        refreshInterval: .seconds(600))
        addTeardownBlock { await client.close() }
        try await client.execute(["SET", "k", "ours"])
        XCTAssertEqual(client.currentPrimary, "127.0.0.1:\(setup.servers.primary.port)")

        try await demote(setup)
        try await setup.admin.execute(["CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"])  // the client's connection breaks
        // Every call now fails: the first on the broken connection, the next ones because the node the
        // sentinels name is not a primary, however often the same node is named again.
        var errors: [String] = []
        for attempt in 1...3 {
            do {
                let value = try await client.execute(["GET", "k"])
                XCTFail("attempt \(attempt) was answered by a replica: \(value)")
            } catch {
                errors.append("\(error)")
            }
        }
        XCTAssertTrue(errors.last?.contains("is not a primary") == true, "\(errors)")
        XCTAssertTrue(errors.dropFirst().allSatisfy { $0.contains("is not a primary") }, "\(errors)")
    }

    func testThePeriodicAskChecksTheNodeItNamesAgain() async throws {
        let setup = try await makeSetup()
        let client = SentinelConnection(url: RedisURL(host: "127.0.0.1", port: 1), sentinel: setup.servers.settings, name: "polling")
        addTeardownBlock { await client.close() }
        try await client.execute(["SET", "k", "ours"])
        try await demote(setup)
        // No error on the connection: the sentinels are asked again within a second, the node still named,
        // and its ROLE says replica.
        var answered: [String] = []
        try await eventually(timeout: .seconds(20)) {
            do {
                answered.append(try await client.execute(["GET", "k"]).string ?? "nil")
                return false
            } catch {
                return "\(error)".contains("is not a primary")
            }
        }
        printFigure("sentinel role: \(answered.count) reads answered by the demoted node before the client noticed")
    }
}
