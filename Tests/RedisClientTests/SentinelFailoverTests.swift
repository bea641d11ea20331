import Foundation
import PushCore
import RedisClient
import TestSupport
import XCTest

/// `SentinelConnection` against a real primary, replica and three sentinels: it asks the sentinels for the
/// primary, and after the primary is killed with SIGKILL it follows them to the promoted replica.
final class SentinelFailoverTests: XCTestCase {
    func testFollowsTheSentinelsToThePromotedReplica() async throws {
        let servers = try await RedisSentinelServers()
        addTeardownBlock { await servers.stop() }
        // redis.url's host:port lead nowhere: only its password, database and TLS are used with Sentinel.
        let url = try RedisURL(parsing: "redis://127.0.0.1:1/0")
        let client = SentinelConnection(url: url, sentinel: servers.settings, name: "sentinel")
        addTeardownBlock { await client.close() }
        for _ in 0..<10 { try await client.execute(["INCR", "counter"]) }
        try await assertEqual(try await client.execute(["WAIT", "1", "2000"]).integer, 1)
        XCTAssertEqual(client.currentPrimary, "127.0.0.1:\(servers.primary.port)")

        let killed = ContinuousClock.now
        servers.primary.kill()
        var failures = 0
        var value: Int64?
        while value == nil && ContinuousClock.now - killed < .seconds(30) {
            do {
                value = try await client.execute(["INCR", "counter"]).integer
            } catch {
                failures += 1
                try await Task.sleep(for: .milliseconds(100))
            }
        }
        let resumed = ContinuousClock.now - killed
        printFigure("sentinel failover: commands resumed \(resumed) after the kill, \(failures) failed meanwhile")
        XCTAssertEqual(value, 11)
        XCTAssertLessThan(resumed, .seconds(20))
        XCTAssertEqual(client.currentPrimary, "127.0.0.1:\(servers.replica.port)")
        let named = await servers.namedPrimary()
        XCTAssertEqual(named, "127.0.0.1:\(servers.replica.port)")
    }

    func testADemotedPrimaryIsLeftForTheOneTheSentinelsName() async throws {
        let servers = try await RedisSentinelServers()
        addTeardownBlock { await servers.stop() }
        // Asking the sentinels only after errors: what moves this one is the demotion of the old primary.
        let client = SentinelConnection(url: RedisURL(host: "127.0.0.1", port: 1), sentinel: servers.settings, name: "switchover",
                                        refreshInterval: .seconds(600))
        addTeardownBlock { await client.close() }
        // Asking them every second (the default): moved within about a second of the sentinels' decision.
        let polling = SentinelConnection(url: RedisURL(host: "127.0.0.1", port: 1), sentinel: servers.settings, name: "polling")
        addTeardownBlock { await polling.close() }
        try await client.execute(["SET", "k", "1"])
        try await polling.execute(["PING"])
        try await assertEqual(try await client.execute(["WAIT", "1", "2000"]).integer, 1)
        // A switchover keeps the old primary up, as a replica: its writes are refused with READONLY.
        let admin = RedisConnection(url: RedisURL(host: "127.0.0.1", port: servers.sentinelPorts[0]), name: "switch")
        addTeardownBlock { await admin.close() }
        try await admin.execute(["SENTINEL", "FAILOVER", servers.master])
        try await eventually(timeout: .seconds(20)) {
            await servers.namedPrimary() == "127.0.0.1:\(servers.replica.port)"
        }
        try await Task.sleep(for: .milliseconds(1100))
        try await polling.execute(["PING"])
        XCTAssertEqual(polling.currentPrimary, "127.0.0.1:\(servers.replica.port)", "moved by the sentinels' answer within a second")
        // Until the old primary has been demoted it still takes writes (Sentinel's own window, up to its 10 s
        // INFO period). The demotion drops its clients (Redis 7), or answers READONLY to one that writes
        // again: either way the client asks the sentinels and moves; a READONLY never reaches the caller.
        let switched = ContinuousClock.now
        var refused = 0, failed = 0
        try await eventually(timeout: .seconds(20)) {
            do {
                try await client.execute(["INCR", "k"])
            } catch RedisError.server(let text) where text.hasPrefix("READONLY") {
                refused += 1
            } catch {
                failed += 1  // the demotion may also drop the connection: asked again, like after a crash
            }
            return client.currentPrimary == "127.0.0.1:\(servers.replica.port)"
        }
        printFigure("sentinel switchover: on the new primary \(ContinuousClock.now - switched) after the sentinels named it; \(refused) refused with READONLY, \(failed) failed otherwise")
        XCTAssertLessThan(ContinuousClock.now - switched, .seconds(20))
        XCTAssertEqual(refused, 0, "a command refused with READONLY is sent again to the new primary, not failed")
        XCTAssertEqual(client.currentPrimary, "127.0.0.1:\(servers.replica.port)")
    }
}
