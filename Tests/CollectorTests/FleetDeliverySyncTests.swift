import Collector
import Logging
import PushCore
import QueueProtocol
import RedisClient
import TestSupport
import XCTest

/// Each app's last delivery is the fleet's: what one worker saw reaches another through Redis (so that a worker just
/// started does not take a dead token for a refusal of the app), and an older time never overwrites a newer one.
final class FleetDeliverySyncTests: RedisTestCase {
    /// Two workers' records of one app, each synchronised through one real redis-server.
    private func worker(_ records: Locked<[String: AppDeliveryRecord]>) -> FleetDeliverySync {
        FleetDeliverySync(connection: connection, keys: keys, logger: Logger(label: "test"),
                          records: { records.withLock { $0 } },
                          record: { field in
                              records.withLock { records in
                                  if let record = records[field] { return record }
                                  let made = AppDeliveryRecord()
                                  records[field] = made
                                  return made
                              }
                          })
    }

    func testALastDeliveryReachesAWorkerThatHasNotDeliveredAndNeverGoesBack() async throws {
        let field = AppDeliveryRecord.fleetKey(provider: .apns, app: "com.example.chat")
        let early = Locked([field: AppDeliveryRecord()])
        let fresh = Locked([String: AppDeliveryRecord]())
        early.withLock { $0[field]!.delivered(atMillis: 1_800_000_000_000) }
        try await worker(early).pass()
        try await worker(fresh).pass()
        XCTAssertEqual(fresh.withLock { $0[field]?.lastDeliveredMillis }, 1_800_000_000_000, "read before its lanes send")
        XCTAssertTrue(fresh.withLock { $0[field]!.deliveredRecently(nowMillis: 1_800_000_060_000) })

        // The fresh worker delivers later; the early one's older time does not overwrite it.
        fresh.withLock { $0[field]!.delivered(atMillis: 1_800_000_100_000) }
        try await worker(fresh).pass()
        try await worker(early).pass()
        try await assertEqual(try await connection.execute(["HGET", keys.lastDeliveries, field]).string, "1800000100000")
        XCTAssertEqual(early.withLock { $0[field]?.lastDeliveredMillis }, 1_800_000_100_000)
    }
}
