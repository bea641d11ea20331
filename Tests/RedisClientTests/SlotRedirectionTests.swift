import Foundation
import PushCore
import RedisClient
import TestSupport
import XCTest

/// `SlotConnection` on a real three-node Redis Cluster while a slot is half-way between two nodes: each
/// command of a pipeline follows its own redirection, and a command that ran is never sent again.
final class SlotRedirectionTests: XCTestCase {
    func testAPipelineWithAMovedAndAnUnmovedKeyRunsEachWriteExactlyOnce() async throws {
        let cluster = try await RedisClusterServers()
        addTeardownBlock { await cluster.stop() }
        let client = SlotConnection(url: try RedisURL(parsing: cluster.seedURL), name: "redirect")
        addTeardownBlock { await client.close() }
        let moved = "{t}:moved", stayed = "{t}:stayed"
        try await client.execute(["SET", moved, "1"])
        try await client.execute(["SET", stayed, "1"])
        let slot = try await cluster.slot(of: moved)
        let move = try await cluster.beginMigration(slot: slot)
        try await cluster.migrateOneKey(move, key: moved)

        // The source answers ASK for the moved key and runs the other increment itself.
        let replies = try await client.pipeline([["INCR", moved], ["INCR", stayed]].map { $0.map { Array($0.utf8) } })
        XCTAssertEqual(replies, [.integer(2), .integer(2)], "replies in the order of the commands")

        // Each increment ran once, where its key lives: the unmoved key was not created on the target too.
        try await assertEqual(try await cluster.onNode(move.source, ["GET", stayed]), .bulk(Array("2".utf8)))
        try await assertEqual(try await cluster.onNode(move.target, ["CLUSTER", "COUNTKEYSINSLOT", String(slot)]), .integer(1))

        try await cluster.migrateOneKey(move, key: stayed)
        try await cluster.finishMigration(move)
        try await assertEqual(try await client.execute(["GET", moved]).string, "2")
        try await assertEqual(try await client.execute(["GET", stayed]).string, "2")
    }

    func testCommandsAnsweredTryAgainAreSentAgainAloneAfterTheMoveEnds() async throws {
        let cluster = try await RedisClusterServers()
        addTeardownBlock { await cluster.stop() }
        let client = SlotConnection(url: try RedisURL(parsing: cluster.seedURL), name: "tryagain")
        addTeardownBlock { await client.close() }
        let a = "{u}:a", b = "{u}:b"
        try await client.execute(["SET", a, "1"])
        try await client.execute(["SET", b, "1"])
        let slot = try await cluster.slot(of: a)
        let move = try await cluster.beginMigration(slot: slot)
        try await cluster.migrateOneKey(move, key: a)

        // MGET of a split slot is answered TRYAGAIN until the move ends; the INCR beside it runs once.
        async let replies = client.pipeline([["INCR", b], ["MGET", a, b]].map { $0.map { Array($0.utf8) } })
        try await Task.sleep(for: .milliseconds(300))
        try await cluster.migrateOneKey(move, key: b)
        try await cluster.finishMigration(move)
        let answers = try await replies
        XCTAssertEqual(answers.first, .integer(2))
        XCTAssertEqual(answers.last, .array([.bulk(Array("1".utf8)), .bulk(Array("2".utf8))]))
    }
}
