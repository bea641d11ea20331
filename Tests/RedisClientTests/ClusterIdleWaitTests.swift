import Foundation
import PushCore
@testable import RedisClient
import TestSupport
import XCTest

/// An idle worker's wait on a Redis Cluster (`SlotConnection.waitForListElement`): the element it wakes for
/// never crosses the network (an oversized one is dead-lettered inside Redis by the claim), and a slot that
/// moved to another node meanwhile is followed.
final class ClusterIdleWaitTests: XCTestCase {
    private func outputBytes(_ cluster: RedisClusterServers, node: Int) async throws -> Int {
        let info = try await cluster.onNode(node, ["INFO", "stats"]).string ?? ""
        let line = info.split(whereSeparator: \.isNewline).first { $0.hasPrefix("total_net_output_bytes:") }
        return Int(line?.split(separator: ":").last ?? "") ?? -1
    }

    func testAWakeUpForAnElementDoesNotReadIt() async throws {
        let cluster = try await RedisClusterServers()
        addTeardownBlock { await cluster.stop() }
        let key = "push:{idle}:queue"
        let client = SlotConnection(seeds: [try RedisURL(parsing: cluster.seedURL)], key: key, name: "idle-wait")
        addTeardownBlock { await client.close() }
        let owner = try await cluster.owner(of: try await cluster.slot(of: key)).index

        async let woken = client.waitForListElement(key, timeoutSeconds: 30)
        try await eventually {
            let clients = try await cluster.onNode(owner, ["INFO", "clients"]).string ?? ""
            return clients.contains("blocked_clients:1")
        }
        let before = try await outputBytes(cluster, node: owner)
        let element = String(repeating: "x", count: 8 << 20)
        try await assertEqual(try await cluster.onNode(owner, ["LPUSH", key, element]), .integer(1))
        let sawElement = try await woken
        XCTAssertTrue(sawElement)
        let sent = try await outputBytes(cluster, node: owner) - before
        XCTAssertLessThan(sent, 64 << 10, "the 8 MiB element was sent to the waiting client (\(sent) bytes out)")
        try await assertEqual(try await cluster.onNode(owner, ["LLEN", key]), .integer(1), "the wait took nothing")
    }

    func testAWaitFollowsItsSlotToItsNewOwner() async throws {
        let cluster = try await RedisClusterServers()
        addTeardownBlock { await cluster.stop() }
        let key = "push:{moving}:queue"
        let client = SlotConnection(seeds: [try RedisURL(parsing: cluster.seedURL)], key: key, name: "moving-wait")
        addTeardownBlock { await client.close() }
        try await client.execute(["LPUSH", key, "m"])
        let learned = try await client.waitForListElement(key, timeoutSeconds: 1)
        XCTAssertTrue(learned)
        let slot = try await cluster.slot(of: key)
        let source = try await cluster.owner(of: slot).index
        XCTAssertEqual(client.currentNode, "127.0.0.1:\(cluster.nodes[source].port)")

        let target = try await cluster.migrate(slot: slot, pause: .zero)
        // The old owner answers MOVED; the wait goes to the new one and finds the element there.
        let followed = try await client.waitForListElement(key, timeoutSeconds: 1)
        XCTAssertTrue(followed)
        XCTAssertEqual(client.currentNode, "127.0.0.1:\(cluster.nodes[target].port)")
        try await client.execute(["DEL", key])
        let empty = try await client.waitForListElement(key, timeoutSeconds: 0.2)
        XCTAssertFalse(empty, "an empty list times out as false")
    }
}
