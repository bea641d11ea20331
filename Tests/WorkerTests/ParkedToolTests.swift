import Foundation
import PushCore
import QueueProtocol
import RedisClient
import TestSupport
import XCTest

/// `worker parked list|requeue|drop`: what an operator does with parked messages no worker will send (an app removed
/// from the configuration, messages nobody wants), with real redis-server and, for the way back, a real worker.
final class ParkedToolTests: ToolTestCase {
    private let removed = "push:parked:xiaomi:com.removed"

    private func park(_ key: String, _ ids: [String]) async throws {
        // The parked list's consumer end is its tail: the oldest first in, as the collector parks them.
        try await client.lpush(key, ids.map { vendorMessageJSON(id: $0, provider: "xiaomi", topic: "com.removed", tokens: [vendorToken($0, 1)]) })
    }

    func testListShowsEveryParkedListAndWhetherItsAppIsConfigured() async throws {
        try await park(removed + ":bulk", ["b1", "b2"])
        let (status, output) = try await tool(["parked", "list", "--json"])
        XCTAssertEqual(status, 0, output)
        let rows = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [[String: Any]], output)
        XCTAssertEqual(rows.count, 1)
        XCTAssertEqual(rows.first?["provider"] as? String, "xiaomi")
        XCTAssertEqual(rows.first?["app"] as? String, "com.removed")
        XCTAssertEqual(rows.first?["class"] as? String, "bulk")
        XCTAssertEqual(rows.first?["messages"] as? Int, 2)
        XCTAssertEqual(rows.first?["configured"] as? Bool, false, "no worker sends for an app the configuration lacks")
    }

    func testDropKeepsAnAuditCopyThatRequeueBringsBackInOrder() async throws {
        try await park(removed, ["m1", "m2", "m3"])
        let refused = try await tool(["parked", "drop", "--provider", "xiaomi", "--app", "com.removed"])
        XCTAssertEqual(refused.status, 2, "not without --yes")
        try await assertEqual(try await client.length(removed), 3)

        let (status, output) = try await tool(["parked", "drop", "--provider", "xiaomi", "--app", "com.removed", "--yes", "--json"])
        XCTAssertEqual(status, 0, output)
        let copies = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [[String: Any]], output)
        let copy = try XCTUnwrap(copies.first?["copy"] as? String)
        XCTAssertTrue(copy.hasPrefix("push:dropped:xiaomi:com.removed:"), copy)
        try await assertEqual(try await client.length(removed), 0)
        try await assertEqual(try await client.length(copy), 3)
        let ttl = try await client.execute(["PTTL", copy]).integer ?? -1
        XCTAssertGreaterThan(ttl, 6 * 24 * 3600 * 1000, "kept a week by default")

        let back = try await tool(["parked", "requeue", "--list", copy])
        XCTAssertEqual(back.status, 0, back.output)
        try await assertEqual(try await client.length(copy), 0)
        // Oldest at the consumer end: claimed first, as before they were parked.
        let queued = try await client.strings(RedisKeys().queue)
        XCTAssertEqual(queued.compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["id"] as? String },
                       ["m3", "m2", "m1"])
    }

    func testAnUnknownProviderOrClassIsBadUsage() async throws {
        let provider = try await tool(["parked", "requeue", "--provider", "nope", "--app", "a"])
        XCTAssertEqual(provider.status, 2)
        XCTAssertTrue(provider.output.contains("--provider nope"), provider.output)
        let messageClass = try await tool(["parked", "drop", "--provider", "xiaomi", "--app", "a", "--class", "vip", "--yes"])
        XCTAssertEqual(messageClass.status, 2)
    }

    /// The way back: a removed app's parked messages, requeued, are delivered once each by a worker configured for the
    /// app again. (A worker configured for an app also takes its parked list back by itself; requeue is for lists
    /// no running worker sends for.)
    func testARemovedAppsListRequeuedIsDeliveredOnceTheAppIsConfiguredAgain() async throws {
        let key = "push:parked:xiaomi:\(ChinaVendorStandIn.topic)"
        let ids = (0..<20).map { "again-\($0)" }
        try await client.lpush(key, ids.map { vendorMessageJSON(id: $0, provider: "xiaomi", tokens: [vendorToken($0, 1)]) })
        let back = try await tool(["parked", "requeue", "--provider", "xiaomi", "--app", ChinaVendorStandIn.topic])
        XCTAssertEqual(back.status, 0, back.output)
        XCTAssertTrue(back.output.contains("20 messages"), back.output)
        try await assertEqual(try await client.length(key), 0)
        try await assertEqual(try await client.length(RedisKeys().queue), 20)

        let vendors = try await ChinaVendorStandIn()
        let worker = try WorkerProcess(environment: vendors.workerEnvironment(redis: redis, ["WORKER_ID": "parked-again"]),
                                       logFile: "\(directory!)/worker.log")
        defer { worker.signal(SIGKILL) }
        try await eventually(timeout: .seconds(60)) { vendors.emulator.xiaomi.stats.delivered >= 20 }
        XCTAssertEqual(vendors.emulator.xiaomi.stats.duplicates, [:])
        worker.signal(SIGTERM)
        _ = await worker.waitForExit(timeout: 30)
        await vendors.stop()
    }
}
