import APNsProvider
import Collector
import Foundation
import Logging
import PushCore
import QueueProtocol
import RedisClient
import TestSupport
import XCTest

/// Collector and Acknowledger against a real redis-server.
final class CollectorTests: RedisTestCase {
    /// The default provider's message rules are its module's: registered, as the worker registers it.
    override class func setUp() {
        super.setUp()
        _ = APNsModule.provider
    }

    struct Harness {
        let collector: Collector
        let acknowledger: Acknowledger
        let gate: CapacityGate
        let batches: AsyncStream<MessageBatch>
        let counts: SharedCounts
        let tasks: [Task<Void, Never>]
    }

    /// The connections the tests opened besides `connection`: each runs a thread of its own until it is
    /// closed, in tearDown.
    private var opened: [RedisConnection] = []

    override func tearDown() async throws {
        for connection in opened { await connection.close() }
        try await super.tearDown()
    }

    private func newConnection(_ url: RedisURL, name: String) -> RedisConnection {
        let connection = RedisConnection(url: url, name: name)
        opened.append(connection)
        return connection
    }

    private func start(settings: CollectorSettings = CollectorSettings(), lease: OwnershipLease? = nil,
                       afterClaimReply: (@Sendable () async -> Void)? = nil) -> Harness {
        let logger = Logger(label: "test")
        let gate = CapacityGate(limit: settings.maxInFlight)
        let counts = SharedCounts()
        let acknowledger = Acknowledger(
            queue: WorkQueue(connection: newConnection(redis.url, name: "ack"), keys: keys, workerID: "w"),
            gate: gate, filteredCap: 100, counts: counts, logger: logger)
        let collector = Collector(
            settings: settings,
            queue: WorkQueue(connection: newConnection(redis.url, name: "claim"), keys: keys, workerID: "w"),
            gate: gate, acknowledger: acknowledger.input, logger: logger, lease: lease, afterClaimReply: afterClaimReply)
        let (batches, output) = AsyncStream.makeStream(of: MessageBatch.self)
        let tasks = [Task { await acknowledger.run() }, Task { await collector.run(output: output) }]
        return Harness(collector: collector, acknowledger: acknowledger, gate: gate, batches: batches, counts: counts, tasks: tasks)
    }

    private func stop(_ harness: Harness) async {
        harness.collector.stop()
        await harness.gate.open()
        harness.acknowledger.input.finish()
        for task in harness.tasks { await task.value }
    }

    func testAWindowClosesAboutWindowMillisAfterItsFirstMessage() async throws {
        let harness = start()
        try await Task.sleep(for: .milliseconds(200))  // idle: the collector sleeps in BLMOVE
        let sent = ContinuousClock.now
        try await connection.lpush(keys.queue, (1...3).map { messageJSON(id: "m\($0)", tokens: [token("a", $0)]) })
        var iterator = harness.batches.makeAsyncIterator()
        let batch = await iterator.next()
        let waited = ContinuousClock.now - sent
        XCTAssertEqual(batch?.messages.map(\.id).sorted(), ["m1", "m2", "m3"])
        XCTAssertEqual(batch?.kind, .private)
        XCTAssertGreaterThanOrEqual(waited, .milliseconds(140), "the window waits for more messages")
        XCTAssertLessThan(waited, .milliseconds(1500), "an idle worker reacts within the window plus round trips")
        await stop(harness)
    }

    func testAFullBatchLeavesWithoutWaitingForTheWindow() async throws {
        var settings = CollectorSettings()
        settings.windowMillis = 5000
        settings.batch.group = 10
        let harness = start(settings: settings)
        try await connection.lpush(keys.queue, (1...25).map { messageJSON(id: "g\($0)", tokens: [token("a", $0)], kind: "group") })
        var iterator = harness.batches.makeAsyncIterator()
        let started = ContinuousClock.now
        let first = await iterator.next()
        let second = await iterator.next()
        XCTAssertEqual(first?.messages.count, 10)
        XCTAssertEqual(second?.messages.count, 10)
        XCTAssertEqual(first?.messages.first?.id, "g1", "oldest first")
        XCTAssertLessThan(ContinuousClock.now - started, .milliseconds(4000), "full batches do not wait for the 5 s window")
        await stop(harness)
        let rest = await iterator.next()
        XCTAssertEqual(rest?.messages.count, 5, "shutdown emits what is buffered")
    }

    func testInvalidInputIsDeadLetteredAtOnceAndAcknowledged() async throws {
        let harness = start()
        try await connection.lpush(keys.queue, ["{broken", messageJSON(id: "ok", tokens: [token("a", 1), "nope"])])
        var iterator = harness.batches.makeAsyncIterator()
        let batch = await iterator.next()
        XCTAssertEqual(batch?.messages.map(\.id), ["ok"])
        try await eventually { try await self.connection.length(self.keys.deadLetters) == 1 }
        let dlq = try await connection.strings(keys.deadLetters).map(jsonObject)
        XCTAssertEqual(dlq.first?["reason"] as? String, "Malformed: not JSON (expected a string key at byte 1)")
        XCTAssertEqual(dlq.first?["raw"] as? String, "{broken")
        XCTAssertTrue(dlq.first?["message"] is NSNull)
        XCTAssertEqual(dlq.first?["worker"] as? String, "w")
        let processing = try await connection.claimedStrings(keys.processing(worker: "w"))
        XCTAssertEqual(processing.count, 1, "the bad element is acknowledged; the good one waits for its outcomes")
        // The valid message's malformed token is feedback, written when the message completes.
        harness.acknowledger.input.yield(.result(.resolved([Resolution(seq: batch!.messages[0].seq, token: token("a", 1), outcome: .delivered)])))
        try await eventually { try await self.connection.claimedCount(self.keys.processing(worker: "w")) == 0 }
        let feedback = try await connection.strings(keys.feedback).map(jsonObject)
        XCTAssertEqual(feedback.first?["reason"] as? String, "BadDeviceToken")
        XCTAssertEqual(feedback.first?["token"] as? String, "nope")
        XCTAssertEqual(feedback.first?["message_id"] as? String, "ok")
        await stop(harness)
    }

    func testAnIdleCollectorDoesNotPollRedis() async throws {
        let harness = start()
        try await Task.sleep(for: .milliseconds(300))
        let before = try await connection.calls(of: "blmove") + connection.calls(of: "evalsha")
        try await Task.sleep(for: .milliseconds(2500))
        let after = try await connection.calls(of: "blmove") + connection.calls(of: "evalsha")
        XCTAssertLessThanOrEqual(after - before, 8, "idle: about one blocking wait and one claim per second")
        await stop(harness)
    }

    func testClaimingPausesWhileThePipelineIsFull() async throws {
        var settings = CollectorSettings()
        settings.maxInFlight = 5
        settings.windowMillis = 10
        let harness = start(settings: settings)
        try await connection.lpush(keys.queue, (1...20).map { messageJSON(id: "m\($0)", tokens: [token("a", $0)]) })
        var iterator = harness.batches.makeAsyncIterator()
        var seen: [PushMessage] = []
        while seen.count < 5, let batch = await iterator.next() { seen += batch.messages }
        try await eventually { try await self.connection.claimedCount(self.keys.processing(worker: "w")) == 5 }
        // Nothing more may come while the room is full: give a claim loop that ignored it time to show it.
        try await Task.sleep(for: .milliseconds(300))
        let claimed = try await connection.claimedCount(keys.processing(worker: "w"))
        let waiting = try await connection.length(keys.queue)
        XCTAssertEqual(claimed, 5, "no more than max_in_flight is claimed")
        XCTAssertEqual(waiting, 15)
        // Outcomes release capacity, and claiming resumes.
        harness.acknowledger.input.yield(.result(.resolved(seen.map { Resolution(seq: $0.seq, token: $0.tokens[0], outcome: .delivered) })))
        let more = await iterator.next()
        XCTAssertNotNil(more)
        await stop(harness)
    }

    /// Ownership fencing (docs/queue-protocol.md). A claim ran in Redis, then the worker paused before it read the reply;
    /// meanwhile its lease lapsed, a peer's recovery returned the claim to the queue and the peer claimed it, and
    /// the confirmation that renewed the lease was made before this claim was registered, so it did not see it.
    /// The collector must check such a claim against the processing hash and drop what the peer took, never
    /// hand it on to be sent (a full run's fencing test sent six messages twice this way, once in 30 runs).
    func testAClaimWhoseReplyCameAfterTheLeaseLapsedIsNotSentIfAPeerTookItOver() async throws {
        let lease = OwnershipLease(shards: 1)
        lease.renew(shard: 0, beatSentAt: OwnershipLease.now(), ttlMillis: 300)
        let peer = WorkQueue(connection: newConnection(redis.url, name: "peer"), keys: keys, workerID: "peer")
        let firstReply = Locked(true)
        let harness = start(lease: lease, afterClaimReply: {
            guard firstReply.withLock({ let first = $0; $0 = false; return first }) else { return }
            // The pause: until the lease has lapsed.
            while !lease.lapsed(shard: 0) { try? await Task.sleep(for: .milliseconds(10)) }
            // A peer found this worker dead, returned its claims and claimed them itself.
            _ = try? await peer.recover(worker: "w", onlyIfDead: false, countDeath: false)
            _ = try? await peer.claim(maxCount: 100, maxBytes: 1 << 20, allowIsolated: true)
            // The heartbeat's confirmation, made without this claim, renewed the lease.
            lease.renew(shard: 0, beatSentAt: OwnershipLease.now(), ttlMillis: 60_000)
        })
        try await connection.lpush(keys.queue, [messageJSON(id: "taken1", tokens: [token("a", 1)]),
                                                 messageJSON(id: "taken2", tokens: [token("a", 2)])])
        try await eventually { try await self.connection.claimedCount(self.keys.processing(worker: "peer")) == 2 }
        try await connection.lpush(keys.queue, [messageJSON(id: "after", tokens: [token("a", 3)])])
        var iterator = harness.batches.makeAsyncIterator()
        let batch = await iterator.next()
        XCTAssertEqual(batch?.messages.map(\.id), ["after"], "what the peer took over is not handed on to be sent here")
        let held = try await connection.claimedCount(keys.processing(worker: "w"))
        XCTAssertEqual(held, 1, "only the message claimed after the lapse is this worker's")
        await stop(harness)
    }

    func testAClaimIsBoundedInTokensNotJustInMessages() async throws {
        var settings = CollectorSettings()
        settings.maxInFlight = 2000
        let harness = start(settings: settings)
        // 20 messages of 1,000 tokens: claiming by message count alone would take all 20,000 tokens at once.
        try await connection.lpush(keys.queue, (0..<20).map { n in
            messageJSON(id: "big\(n)", tokens: (0..<1000).map { token("b\(n % 10)", $0) })
        })
        try await eventually { try await self.connection.claimedCount(self.keys.processing(worker: "w")) > 0 }
        try await Task.sleep(for: .milliseconds(300))  // a claim that ignored the room would take more by now
        let claimed = try await connection.claimedCount(keys.processing(worker: "w"))
        let inFlight = await harness.gate.inFlight
        XCTAssertLessThanOrEqual(claimed, 3, "a claim takes what fits the room in tokens (plus one message at most)")
        XCTAssertLessThanOrEqual(inFlight, 3000)
        XCTAssertGreaterThan(claimed, 0)
        await stop(harness)
    }

    func testDeadWorkersAreFoundInTheRegistryWithoutScanningTheKeyspace() async throws {
        let big = try RedisServer(arguments: ["--enable-debug-command", "yes"])
        defer { big.kill() }
        let admin = newConnection(big.url, name: "admin")
        try await admin.execute(["DEBUG", "POPULATE", "200000", "unrelated"])  // a shared Redis with many keys
        func queue(_ worker: String) -> WorkQueue {
            WorkQueue(connection: newConnection(big.url, name: worker), keys: keys, workerID: worker)
        }
        try await admin.lpush(keys.queue, ["a", "b"])
        let dead = queue("dead")
        try await dead.beat(ttlMillis: 1000, info: "{}")
        _ = try await dead.claim(maxCount: 10, maxBytes: 1000, allowIsolated: true)
        try await admin.execute(["DEL", keys.heartbeat(worker: "dead")])
        try await admin.execute(["ZADD", keys.workers, "1", "dead"])  // its last beat was long ago
        try await admin.execute(["CONFIG", "RESETSTAT"])
        let live = queue("live")
        let heartbeat = Heartbeat(queue: live, recoveryQueue: queue("live-recovery"), ttlMillis: 1000, logger: Logger(label: "t"))
        try await heartbeat.beatOnce()
        let returned = try await heartbeat.recoverDeadWorkers()
        XCTAssertEqual(returned, 2)
        try await assertEqual(try await admin.calls(of: "scan"), 0, "liveness and recovery never scan the keyspace")
        try await assertEqual(try await admin.calls(of: "keys"), 0)
    }
}
