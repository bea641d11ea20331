import Foundation
import PushCore
import RedisClient
import TestSupport
import XCTest

/// `SlotConnection` on a real Redis Cluster of three primaries with a replica each: the primary its only
/// configured address names, which owns its slot, is killed with SIGKILL; the connection finds the
/// promoted replica through the other nodes it learned from the topology.
final class ClusterFailoverTests: XCTestCase {
    func testFollowsThePromotedReplicaWhenThePrimaryItWasGivenDies() async throws {
        let cluster = try await RedisClusterServers(primaries: 3, replicasEach: 1, nodeTimeoutMillis: 2000)
        addTeardownBlock { await cluster.stop() }
        let key = "push:{failover}:counter"
        let primary = try await cluster.owner(of: try await cluster.slot(of: key)).index
        let replica = try await cluster.replicaIndex(of: primary)
        // Only the primary that is about to die is given.
        let client = SlotConnection(seeds: [cluster.nodes[primary].url], key: key, name: "failover")
        addTeardownBlock { await client.close() }
        for _ in 0..<10 { try await client.execute(["INCR", key]) }
        // Replicated before the kill, so none of the ten is lost with the old primary.
        try await assertEqual(try await client.execute(["WAIT", "1", "2000"]).integer, 1)
        XCTAssertEqual(client.currentNode, "127.0.0.1:\(cluster.nodes[primary].port)")

        let killed = ContinuousClock.now
        cluster.kill(primary)
        var failures = 0
        var value: Int64?
        while value == nil && ContinuousClock.now - killed < .seconds(20) {
            do {
                value = try await client.execute(["INCR", key]).integer
            } catch {
                failures += 1
                try await Task.sleep(for: .milliseconds(100))
            }
        }
        let resumed = ContinuousClock.now - killed
        var promoted: Duration?
        if await cluster.isPromoted(replica) { promoted = ContinuousClock.now - killed }
        printFigure("cluster failover: commands resumed \(resumed) after the kill, \(failures) failed meanwhile; replica promoted: \(promoted != nil)")
        XCTAssertEqual(value, 11, "the eleventh increment, on the promoted replica, after the ten replicated ones")
        XCTAssertLessThan(resumed, .seconds(15))
        XCTAssertEqual(client.currentNode, "127.0.0.1:\(cluster.nodes[replica].port)", "the promoted replica serves the slot")
        // The next commands go there directly.
        try await assertEqual(try await client.execute(["INCR", key]).integer, 12)
        try await assertEqual(try await cluster.onNode(replica, ["GET", key]), .bulk(Array("12".utf8)))
    }

    /// Issue 32: connections of one process share one topology (`ClusterMap`). A connection first used after
    /// the seed died (a worker's acknowledgement connection, whose first command can come late) must not be
    /// left asking only that seed: it learns from what the other connections learned.
    func testAConnectionFirstUsedAfterTheSeedDiedFollowsTheFailover() async throws {
        let cluster = try await RedisClusterServers(primaries: 3, replicasEach: 1, nodeTimeoutMillis: 2000)
        addTeardownBlock { await cluster.stop() }
        let key = "push:{late}:counter"
        let primary = try await cluster.owner(of: try await cluster.slot(of: key)).index
        let replica = try await cluster.replicaIndex(of: primary)
        let map = ClusterMap(seeds: [cluster.nodes[primary].url], name: "shared")
        let early = SlotConnection(map: map, key: key, name: "early")
        let late = SlotConnection(map: map, key: key, name: "late")
        addTeardownBlock {
            await early.close()
            await late.close()
        }
        for _ in 0..<10 { try await early.execute(["INCR", key]) }
        try await assertEqual(try await early.execute(["WAIT", "1", "2000"]).integer, 1)

        cluster.kill(primary)
        try await eventually(timeout: .seconds(30)) { await cluster.isPromoted(replica) }
        // Its first command ever: to the dead seed (the slot's last known primary), then the promoted replica.
        var value: Int64?
        try await eventually(timeout: .seconds(30)) {
            value = try? await late.execute(["INCR", key]).integer
            return value != nil
        }
        XCTAssertEqual(value, 11)
        XCTAssertEqual(late.currentNode, "127.0.0.1:\(cluster.nodes[replica].port)")
        XCTAssertEqual(early.currentNode, late.currentNode, "one topology for both")
    }
}
