import Foundation
import PushCore
import QueueProtocol
import RedisClient
import TestSupport
import XCTest

/// A field the producer leaves out leaves the provider's default: a message without `expiration` is sent
/// without `apns-expiration`, so Apple stores it for an iPhone that is offline; `expiration: 0` still means
/// "try once" and a time is sent as given. Read off what the emulator received from a real worker.
final class ExpirationHeaderTests: XCTestCase {
    func testNoExpirationSendsNoHeaderAndZeroStillMeansTryOnce() async throws {
        let redis = try RedisServer()
        defer { redis.kill() }
        let record = makeTemporaryDirectory("expiration") + "/delivered.jsonl"
        let apns = try await EmulatorStandIn { $0.recordFile = record }
        let client = RedisConnection(url: redis.url, name: "test-client")
        addTeardownBlock { await client.close() }
        let later = Int(Date().timeIntervalSince1970) + 3600
        try await client.lpush(RedisKeys().queue, [
            messageJSON(id: "none", tokens: [token("e1", 1)]),
            messageJSON(id: "zero", tokens: [token("e1", 2)], extra: ["expiration": 0]),
            messageJSON(id: "later", tokens: [token("e1", 3)], extra: ["expiration": later]),
        ])
        let worker = try WorkerProcess(environment: apns.workerEnvironment(redis: redis, ["WORKER_ID": "expiration"]),
                                       logFile: makeTemporaryDirectory("expiration-worker") + "/worker.log")
        defer { worker.signal(SIGKILL) }
        try await eventually(timeout: .seconds(60)) { apns.emulator.stats.count(status: 200) == 3 }
        worker.signal(SIGTERM)
        _ = await worker.waitForExit(timeout: 30)
        await apns.stop()
        let lines = try String(contentsOfFile: record, encoding: .utf8).split(separator: "\n").map { jsonObject(Array($0.utf8)) }
        let byToken = Dictionary(lines.map { ($0["token"] as? String ?? "", $0) }) { first, _ in first }
        XCTAssertEqual(byToken.count, 3, "\(lines)")
        XCTAssertNil(byToken[token("e1", 1)]?["expiration"], "no expiration given: no apns-expiration header")
        XCTAssertEqual(byToken[token("e1", 2)]?["expiration"] as? String, "0", "0: try once")
        XCTAssertEqual(byToken[token("e1", 3)]?["expiration"] as? String, String(later))
    }
}
