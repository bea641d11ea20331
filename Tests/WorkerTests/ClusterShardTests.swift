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
        let apns = try await EmulatorStandIn { $0.latencyMillis = 5 }
        let shards = (0..<4).map { "push:{\($0)}" }
        let keys = shards.map { RedisKeys(prefix: $0) }
        let clients = shards.map { SlotConnection(url: try! RedisURL(parsing: cluster.seedURL), name: "producer-\($0)") }
        let perShard = 400
        for (index, client) in clients.enumerated() {
            try await client.execute(["LPUSH", keys[index].queue] + (0..<perShard).map { n in
                messageJSON(id: "s\(index)-\(n)", tokens: [token("a\(index)", n)])
            })
        }
        let directory = makeTemporaryDirectory("cluster")
        let workers = try (0..<2).map { n in
            try WorkerProcess(environment: [
                "REDIS_URL": cluster.seedURL, "REDIS_SHARDS": shards.joined(separator: ","),
                "APNS_ENDPOINT": apns.endpoint, "APNS_CA_FILE": apns.caFile,
                "APNS_APPS_0_TOPIC": "com.example.chat", "APNS_APPS_0_TEAM_ID": EmulatorStandIn.teamID,
                "APNS_APPS_0_KEY_ID": EmulatorStandIn.keyID, "APNS_APPS_0_KEY_FILE": apns.keyFile,
                "WORKER_ID": "cw\(n)", "COLLECTOR_MAX_IN_FLIGHT": "40", "COLLECTOR_WINDOW_MS": "10",
                "REDIS_HEARTBEAT_TTL_MS": "2000",
            ], logFile: "\(directory)/cw\(n).log")
        }
        try await eventually(timeout: .seconds(30)) { apns.answered().count >= 200 }
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
        for client in clients { await client.close() }
        await apns.stop()
        await cluster.stop()
    }
}
