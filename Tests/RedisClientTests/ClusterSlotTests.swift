import Foundation
import PushCore
@testable import RedisClient
import TestSupport
import XCTest

/// The slot a SlotConnection computes for its key is the one Redis computes (CLUSTER KEYSLOT on a real
/// cluster-enabled redis-server), hash tags included; against a plain Redis it is a plain connection.
final class ClusterSlotTests: XCTestCase {
    func testSlotsMatchClusterKeyslot() async throws {
        let server = try RedisServer(arguments: ["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"], port: freeClusterPort())
        let admin = RedisConnection(url: server.url, name: "keyslot")
        addTeardownBlock { await admin.close() }
        let keys = ["push:{0}", "push:{1}", "push:{2}", "push:{3}", "push:{0}:queue", "foo", "123456789", "{user1000}.following",
                    "foo{}{bar}", "foo{{bar}}zap", "foo{bar}{zap}", "{", "}{", "{}", "", "ключ{x}", "push:{shard-7}:processing:w1"]
            + (0..<50).map { _ in UUID().uuidString }
        for key in keys {
            let expected = Int(try await admin.execute(["CLUSTER", "KEYSLOT", key]).integer ?? -1)
            XCTAssertEqual(ClusterSlot.of(key: key), expected, key)
        }
        XCTAssertEqual(ClusterSlot.of(key: "123456789"), 0x31C3 % 16384, "CRC16/XMODEM's check value")
        server.kill()
    }

    func testAgainstAPlainRedisItIsAPlainConnectionToTheFirstAddress() async throws {
        let server = try RedisServer()
        let client = SlotConnection(seeds: [server.url], key: "push:{0}", name: "plain")
        addTeardownBlock { await client.close() }
        try await client.execute(["SET", "push:{0}:x", "1"])
        try await assertEqual(try await client.execute(["INCR", "push:{0}:x"]).integer, 2)
        XCTAssertEqual(client.currentNode, "127.0.0.1:\(server.port)")
        server.kill()
    }
}
