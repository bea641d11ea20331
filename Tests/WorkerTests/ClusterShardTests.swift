import Foundation
import PushCore
import QueueProtocol
import RedisClient
import TestSupport
import XCTest

/// `redis.shards` on a real three-node Redis Cluster: four hash-tagged key sets, two workers, and a slot
/// moved to another node while they work. Every message is delivered exactly once.
final class ClusterShardTests: XCTestCase {
    func testFourShardsTwoWorkersAndASlotMovedMidRunLoseAndDuplicateNothing() async throws {
        let cluster = try await RedisClusterServers()
        addTeardownBlock { await cluster.stop() }
        let apns = try await EmulatorStandIn { $0.latencyMillis = 5 }
        let shards = (0..<4).map { "push:{\($0)}" }
        let keys = shards.map { RedisKeys(prefix: $0) }
        let clients = shards.map { SlotConnection(url: try! RedisURL(parsing: cluster.seedURL), name: "producer-\($0)") }
        addTeardownBlock { for client in clients { await client.close() } }
        let perShard = 400
        try await fill(clients, keys, perShard: perShard, tokenPrefix: "a")
        let directory = makeTemporaryDirectory("cluster")
        let workers = try (0..<2).map { n in
            try WorkerProcess(environment: apns.workerEnvironment(redisURL: cluster.seedURL, [
                "REDIS_SHARDS": shards.joined(separator: ","),
                "WORKER_ID": "cw\(n)", "COLLECTOR_MAX_IN_FLIGHT": "40", "COLLECTOR_WINDOW_MS": "10",
                "REDIS_HEARTBEAT_TTL_MS": "2000"
            ]), logFile: "\(directory)/cw\(n).log")
        }
        try await eventually(timeout: .seconds(30)) { apns.answeredCount >= 200 }
        // Move shard 0's slot (its queue, processing hashes, registry...) to another node while both work.
        let slot = try await cluster.slot(of: keys[0].queue)
        let before = try await cluster.owner(of: slot).index
        let after = try await cluster.migrate(slot: slot, pause: .milliseconds(150))
        XCTAssertNotEqual(before, after)

        try await waitUntilShardsDrained(clients, keys: keys, workers: (0..<2).map { "cw\($0)" }, timeout: .seconds(90))
        let delivered = acceptances(by: apns)
        let expected = (0..<4).flatMap { index in (0..<perShard).map { token("a\(index)", $0) } }
        XCTAssertEqual(expected.filter { delivered[$0] == nil }, [], "every message delivered")
        XCTAssertEqual(expected.filter { (delivered[$0] ?? 0) > 1 }, [], "none twice")
        for (index, client) in clients.enumerated() {
            try await assertEqual(try await client.execute(["LLEN", keys[index].deadLetters]).integer, 0)
        }
        let logs = workers.map(\.log).joined()
        XCTAssertFalse(logs.contains("CROSSSLOT"), logs)
        for worker in workers { worker.signal(SIGTERM) }
        for worker in workers {
            let status = await worker.waitForExit(timeout: 20)
            XCTAssertEqual(status, 0, worker.log.suffix(2000).description)
        }
        await apns.stop()
    }

    /// The operator's own tool under running workers: `redis-cli --cluster reshard --cluster-pipeline 1` moves
    /// every slot of a node to the next one, three times in turn. Nothing is lost or sent twice, no key ends up
    /// on two nodes, and `redis-cli --cluster check` is clean afterwards.
    func testRedisCliReshardingWholeNodesUnderRunningWorkersLosesAndDuplicatesNothing() async throws {
        guard let cli = which("redis-cli") else { throw XCTSkip("redis-cli is not installed") }
        let cluster = try await RedisClusterServers()
        addTeardownBlock { await cluster.stop() }
        let apns = try await EmulatorStandIn { $0.latencyMillis = 20 }
        let shards = (0..<4).map { "push:{\($0)}" }
        let keys = shards.map { RedisKeys(prefix: $0) }
        let clients = shards.map { SlotConnection(url: try! RedisURL(parsing: cluster.seedURL), name: "producer-\($0)") }
        addTeardownBlock { for client in clients { await client.close() } }
        let perShard = 1500
        try await fill(clients, keys, perShard: perShard, tokenPrefix: "b")
        let directory = makeTemporaryDirectory("reshard")
        let workers = try (0..<2).map { n in
            try WorkerProcess(environment: apns.workerEnvironment(redisURL: cluster.seedURL, [
                "REDIS_SHARDS": shards.joined(separator: ","),
                "WORKER_ID": "rw\(n)", "COLLECTOR_MAX_IN_FLIGHT": "10", "COLLECTOR_WINDOW_MS": "10",
                "REDIS_HEARTBEAT_TTL_MS": "5000"
            ]), logFile: "\(directory)/rw\(n).log")
        }
        // A node that gave away its last slot stays a primary (by default Redis 7 turns it into a replica of
        // the node that took them), so that slots can be moved back to it in the next round.
        for node in 0..<3 { _ = try await cluster.onNode(node, ["CONFIG", "SET", "cluster-allow-replica-migration", "no"]) }
        try await eventually(timeout: .seconds(30)) { apns.answeredCount >= 100 }
        // Each round starts with a backlog on every shard (topped up to 500 queued), so the workers are sending
        // while slots move however fast or slow this machine is, and each round must see answers.
        var produced = Array(repeating: perShard, count: 4)
        var answeredDuringRound: [(before: Int, after: Int)] = []
        for round in 0..<3 {
            for (index, client) in clients.enumerated() {
                let queued = Int(try await client.execute(["LLEN", keys[index].queue]).integer ?? 0)
                guard queued < 500 else { continue }
                let from = produced[index]
                produced[index] += 500 - queued
                try await client.execute(["LPUSH", keys[index].queue] + (from..<produced[index]).map { n in
                    messageJSON(id: "b\(index)-\(n)", tokens: [token("b\(index)", n)])
                })
            }
            let before = apns.answeredCount
            let source = try await cluster.slotsOwned(by: round % 3)
            let target = try await cluster.slotsOwned(by: (round + 1) % 3)
            guard source.count > 0 else { continue }
            let moved = try runCommand(cli, ["--cluster", "reshard", "127.0.0.1:\(cluster.nodes[0].port)",
                                             "--cluster-from", source.id, "--cluster-to", target.id,
                                             "--cluster-slots", String(source.count), "--cluster-yes", "--cluster-pipeline", "1"])
            XCTAssertEqual(moved.status, 0, String(moved.output.suffix(2000)))
            answeredDuringRound.append((before, apns.answeredCount))
        }
        printFigure("redis-cli reshard: answers before and after each round: \(answeredDuringRound.map { "\($0.before)-\($0.after)" }) of \(produced.reduce(0, +))")
        XCTAssertEqual(answeredDuringRound.count, 3)
        for (round, answers) in answeredDuringRound.enumerated() {
            XCTAssertGreaterThan(answers.after, answers.before, "round \(round): the workers kept sending while slots moved")
        }
        try await waitUntilShardsDrained(clients, keys: keys, workers: ["rw0", "rw1"], timeout: .seconds(180))
        let delivered = acceptances(by: apns)
        let expected = (0..<4).flatMap { index in (0..<produced[index]).map { token("b\(index)", $0) } }
        XCTAssertEqual(expected.filter { delivered[$0] == nil }, [], "every message delivered")
        XCTAssertEqual(expected.filter { (delivered[$0] ?? 0) > 1 }, [], "none twice")
        let check = try runCommand(cli, ["--cluster", "check", "127.0.0.1:\(cluster.nodes[1].port)"])
        XCTAssertEqual(check.status, 0, check.output)
        XCTAssertFalse(check.output.contains("[ERR]") || check.output.contains("[WARNING]"), check.output)
        for shard in keys {
            let slot = try await cluster.slot(of: shard.queue)
            var holders = 0
            for node in 0..<3 where (try await cluster.onNode(node, ["CLUSTER", "COUNTKEYSINSLOT", String(slot)])).integer ?? 0 > 0 {
                holders += 1
            }
            XCTAssertLessThanOrEqual(holders, 1, "the keys of \(shard.prefix) live on one node")
        }
        for worker in workers { worker.signal(SIGTERM) }
        for worker in workers {
            let status = await worker.waitForExit(timeout: 20)
            XCTAssertEqual(status, 0, worker.log.suffix(2000).description)
        }
        await apns.stop()
    }
}
