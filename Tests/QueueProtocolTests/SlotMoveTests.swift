import Foundation
import PushCore
@testable import QueueProtocol
import RedisClient
import TestSupport
import XCTest

/// The queue protocol's scripts on a real Redis Cluster while the shard's slot moves between nodes
/// (what `redis-cli --cluster reshard` does under running workers).
final class SlotMoveTests: XCTestCase {
    /// A node that joined the cluster (the usual "add a node, then reshard") has an empty script cache;
    /// a script whose keys were moved there must still run during the move.
    func testAScriptRunsOnTheImportingNodeWhoseScriptCacheIsEmpty() async throws {
        let cluster = try await RedisClusterServers()
        addTeardownBlock { await cluster.stop() }
        let client = SlotConnection(url: try RedisURL(parsing: cluster.seedURL), name: "scripts")
        addTeardownBlock { await client.close() }
        let runner = ScriptRunner(connection: client)
        let script = Script(name: "incr", source: "return redis.call('INCR', KEYS[1])")
        let key = "{s}:counter"
        try await assertEqual(try await runner.run(script, keys: [key], arguments: []), .integer(1))
        let move = try await cluster.beginMigration(slot: try await cluster.slot(of: key))
        try await cluster.migrateOneKey(move, key: key)
        _ = try await cluster.onNode(move.target, ["SCRIPT", "FLUSH"])

        try await assertEqual(try await runner.run(script, keys: [key], arguments: []), .integer(2))
        try await cluster.finishMigration(move)
        try await assertEqual(try await runner.run(script, keys: [key], arguments: []), .integer(3))
    }

    /// On a migrating source, a key a script empties is deleted, and touching it again in the same script
    /// fails ("non local key"). The acknowledgement must not stop half-way: the records of the messages
    /// it deleted are written, and a message no longer claimed writes nothing.
    func testAnAcknowledgementOnAMigratingSourceIsAppliedWhole() async throws {
        let cluster = try await RedisClusterServers()
        addTeardownBlock { await cluster.stop() }
        let client = SlotConnection(url: try RedisURL(parsing: cluster.seedURL), name: "ack")
        addTeardownBlock { await client.close() }
        let keys = RedisKeys(prefix: "push:{q}")
        let queue = WorkQueue(connection: client, keys: keys, workerID: "w")
        // Every key of the script exists on the source, so Redis lets the script start there.
        try await client.execute(["HSET", keys.processing(worker: "w"), "1", "m1", "2", "m2"])
        // m2's own death count, filed under its claimed entry (`<processing key>#<sequence>`).
        try await client.execute(["HSET", keys.deliveries, "\(keys.processing(worker: "w"))#2", "1"])
        for list in [keys.deadLetters, keys.feedback, keys.filtered] { try await client.execute(["LPUSH", list, "older"]) }
        let move = try await cluster.beginMigration(slot: try await cluster.slot(of: keys.queue))

        // m1 plain, m2 counted (clears its death count, which empties the deliveries hash), then two
        // messages no longer claimed (seq 3 and 4) with records that must not be written.
        let acked = try await queue.acknowledge([
            CompletedMessage(seq: 1, records: [], notifications: 1),
            CompletedMessage(seq: 2, counted: true, records: [.deadLetter(Array("dl-2".utf8))], notifications: 1),
            CompletedMessage(seq: 3, counted: true, records: [.feedback(Array("fb-3".utf8))], notifications: 1),
            CompletedMessage(seq: 4, records: [.filtered(Array("ft-4".utf8))], notifications: 1),
        ], filteredCap: 100)
        XCTAssertEqual(acked, 2)
        try await assertEqual(try await client.execute(["LRANGE", keys.deadLetters, "0", "-1"]).array?.compactMap(\.string), ["dl-2", "older"])
        try await assertEqual(try await client.execute(["LRANGE", keys.feedback, "0", "-1"]).array?.compactMap(\.string), ["older"])
        try await assertEqual(try await client.execute(["LRANGE", keys.filtered, "0", "-1"]).array?.compactMap(\.string), ["older"])
        try await assertEqual(try await client.execute(["EXISTS", keys.processing(worker: "w")]).integer, 0)
        try await assertEqual(try await client.execute(["EXISTS", keys.deliveries]).integer, 0, "m2's death count cleared")
    }
}
