import APNsProvider
import Collector
import Foundation
import Logging
import PushCore
import QueueProtocol
import RedisClient
import TestSupport
import XCTest

/// `redis.wait_replicas`: an acknowledgement holds its messages' room until a replica has it (Redis `WAIT`), so a
/// failover right after it cannot bring the messages back to be sent again; a replica that does not answer
/// in time delays the room by `redis.wait_timeout_ms` at most and never undoes the acknowledgement.
final class ReplicatedAcknowledgementTests: RedisTestCase {
    /// The default provider's message rules are its module's: registered, as the worker registers it.
    override class func setUp() {
        super.setUp()
        _ = APNsModule.provider
    }

    private var replica: RedisServer!
    private var replicaConnection: RedisConnection!
    private var ackConnection: RedisConnection!

    override func setUp() async throws {
        try await super.setUp()
        replica = try RedisServer(arguments: ["--replicaof", "127.0.0.1", String(redis.port)])
        replicaConnection = RedisConnection(url: replica.url, name: "replica")
        ackConnection = RedisConnection(url: redis.url, name: "ack")
        try await eventually(timeout: .seconds(20)) {  // the replica is in sync
            let info = try await self.replicaConnection.execute(["INFO", "replication"]).string ?? ""
            return info.contains("master_link_status:up")
        }
    }

    override func tearDown() async throws {
        replica.signal(SIGCONT)
        await replicaConnection.close()
        await ackConnection.close()
        replica.kill()
        try await super.tearDown()
    }

    /// Claims `count` messages and has the acknowledger track them, one token each.
    private func claim(_ count: Int, queue: WorkQueue, gate: CapacityGate, acknowledger: Acknowledger) async throws -> [ClaimedElement] {
        for n in 0..<count {
            try await connection.execute(["LPUSH", keys.queue, #"{"id":"m\#(n)","topic":"t","tokens":["aa"],"payload":{}}"#])
        }
        let claimed = try await queue.claim(maxCount: count, maxBytes: 1 << 20, allowIsolated: true).elements
        XCTAssertEqual(claimed.count, count)
        await gate.add(claimed.count, bytes: claimed.reduce(0) { $0 + $1.raw.count })
        acknowledger.input.yield(.claimed(claimed.map {
            ClaimRegistration(element: $0, messageID: "m", appTopic: "t", pendingTokens: 1, notifications: 1, records: [])
        }))
        return claimed
    }

    private func deliver(_ claimed: [ClaimedElement], acknowledger: Acknowledger) {
        acknowledger.input.yield(.result(.resolved(claimed.map { Resolution(seq: $0.seq, token: "aa", outcome: .delivered) })))
    }

    func testTheRoomComesBackOnlyOnceAReplicaHasTheAcknowledgementOrTheWaitHasTimedOut() async throws {
        let queue = WorkQueue(connection: ackConnection, keys: keys, workerID: "w1")
        let gate = CapacityGate(limit: 100)
        let acknowledger = Acknowledger(queue: queue, gate: gate, filteredCap: 100, counts: SharedCounts(),
                                        logger: Logger(label: "test"), replication: (replicas: 1, timeoutMillis: 1500))
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask { await acknowledger.run() }

            // The replica takes the stream: room comes back at once, and the replica already holds the acknowledgement.
            let first = try await claim(3, queue: queue, gate: gate, acknowledger: acknowledger)
            var started = ContinuousClock.now
            deliver(first, acknowledger: acknowledger)
            await gate.waitUntilEmpty()
            XCTAssertLessThan(ContinuousClock.now - started, .milliseconds(1000))
            let onReplica = try await replicaConnection.execute(["HLEN", keys.processing(worker: "w1")]).integer
            XCTAssertEqual(onReplica, 0, "the replica had the acknowledgement when the room came back")

            // The replica is frozen: the acknowledgement stands on the primary, and the room waits for the timeout.
            let second = try await claim(3, queue: queue, gate: gate, acknowledger: acknowledger)
            try await eventually(timeout: .seconds(10)) {  // the replica has the claim
                try await self.replicaConnection.execute(["HLEN", self.keys.processing(worker: "w1")]).integer == 3
            }
            replica.signal(SIGSTOP)
            started = ContinuousClock.now
            deliver(second, acknowledger: acknowledger)
            await gate.waitUntilEmpty()
            let held = ContinuousClock.now - started
            XCTAssertGreaterThanOrEqual(held, .milliseconds(1400), "the room waited for the replica, up to redis.wait_timeout_ms")
            XCTAssertLessThan(held, .seconds(5), "and no longer")
            let onPrimary = try await connection.execute(["HLEN", keys.processing(worker: "w1")]).integer
            XCTAssertEqual(onPrimary, 0, "a wait that fell short does not undo the acknowledgement")
            replica.signal(SIGCONT)
            try await eventually(timeout: .seconds(10)) {  // the replica catches up
                try await self.replicaConnection.execute(["HLEN", self.keys.processing(worker: "w1")]).integer == 0
            }
            acknowledger.input.finish()
        }
    }

    func testWithoutTheOptionTheRoomDoesNotWaitForAFrozenReplica() async throws {
        let queue = WorkQueue(connection: ackConnection, keys: keys, workerID: "w2")
        let gate = CapacityGate(limit: 100)
        let acknowledger = Acknowledger(queue: queue, gate: gate, filteredCap: 100, counts: SharedCounts(), logger: Logger(label: "test"))
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask { await acknowledger.run() }
            let claimed = try await claim(2, queue: queue, gate: gate, acknowledger: acknowledger)
            replica.signal(SIGSTOP)
            let started = ContinuousClock.now
            deliver(claimed, acknowledger: acknowledger)
            await gate.waitUntilEmpty()
            XCTAssertLessThan(ContinuousClock.now - started, .milliseconds(1000))
            acknowledger.input.finish()
        }
    }
}
