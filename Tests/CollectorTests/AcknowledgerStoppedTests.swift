import Collector
import Foundation
import Logging
import PushCore
import QueueProtocol
import RedisClient
import TestSupport
import XCTest

/// Issue 32: asking the Acknowledger for orphans (the collector does after its claim connection broke) must
/// be answered even once the Acknowledger's input has ended; a question nobody will read would hang its caller.
final class AcknowledgerStoppedTests: RedisTestCase {
    private var ackConnection: RedisConnection!

    override func setUp() async throws {
        try await super.setUp()
        ackConnection = RedisConnection(url: redis.url, name: "ack")
    }

    override func tearDown() async throws {
        await ackConnection.close()
        try await super.tearDown()
    }

    private func makeAcknowledger() -> Acknowledger {
        Acknowledger(queue: WorkQueue(connection: ackConnection, keys: keys, workerID: "w"), gate: CapacityGate(limit: 100),
                     filteredCap: 100, counts: SharedCounts(), logger: Logger(label: "test"))
    }

    /// Asks as the collector does, without waiting on it here: if it is never answered the test fails
    /// instead of hanging (the question's task is then left suspended, which only a failing run does).
    private func ask(_ acknowledger: Acknowledger) -> Locked<[ClaimedElement]?> {
        let answer = Locked<[ClaimedElement]?>(nil)
        let input = acknowledger.input
        Task {
            let orphans = await input.findOrphans()
            answer.withLock { $0 = orphans }
        }
        return answer
    }

    func testWhileRunningTheOrphansAreFound() async throws {
        try await connection.execute(["HSET", keys.processing(worker: "w"), "5", "lost-reply"])
        let acknowledger = makeAcknowledger()
        await withDiscardingTaskGroup { group in
            group.addTask { await acknowledger.run() }
            let answer = ask(acknowledger)
            try? await eventually { answer.withLock { $0 != nil } }
            XCTAssertEqual(answer.withLock { $0 }?.map(\.seq), [5])
            acknowledger.input.finish()
        }
    }

    func testAfterTheInputHasEndedTheAnswerIsEmpty() async throws {
        let acknowledger = makeAcknowledger()
        acknowledger.input.finish()
        await acknowledger.run()  // returns: its input has ended
        let answer = ask(acknowledger)
        try await eventually { answer.withLock { $0 != nil } }
        XCTAssertEqual(answer.withLock { $0 }, [], "nobody tracks claims any more: they stay claimed for recovery")
    }
}
