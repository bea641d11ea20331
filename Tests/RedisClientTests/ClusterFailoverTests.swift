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
        print("cluster failover: commands resumed \(resumed) after the kill, \(failures) failed meanwhile; replica promoted: \(promoted != nil)")
        XCTAssertEqual(value, 11, "the eleventh increment, on the promoted replica, after the ten replicated ones")
        XCTAssertLessThan(resumed, .seconds(15))
        XCTAssertEqual(client.currentNode, "127.0.0.1:\(cluster.nodes[replica].port)", "the promoted replica serves the slot")
        // The next commands go there directly.
        try await assertEqual(try await client.execute(["INCR", key]).integer, 12)
        try await assertEqual(try await cluster.onNode(replica, ["GET", key]), .bulk(Array("12".utf8)))
    }
}
