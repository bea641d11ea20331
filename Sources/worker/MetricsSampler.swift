import Collector
import PushCore
import Pusher
import QueueProtocol

/// Gauges that are states rather than events, sampled: tokens in flight and open connections every
/// second, the queue, dead-letter and feedback lengths (summed over shards) every two seconds, and the age of each
/// input list's oldest message (the oldest over shards) every 30.
struct MetricsSampler: Sendable {
    let gate: CapacityGate
    let pusher: Pusher
    let queues: [WorkQueue]
    /// `collector.max_element_bytes`: a larger oldest element is not read for its age (it is a dead letter to be).
    let maxElementBytes: Int
    let metrics = PushMetrics.shared

    static let queueEvery = 2
    /// The oldest messages' ages every 30 s (from the start): reading one makes Redis copy the element into its script,
    /// and a producer's oversized element may wait at the consumer end until a claim dead-letters it. The alert on the
    /// age waits 5 minutes; 30 s is ample.
    static let agesEvery = 30

    func run() async {
        var tick = 0
        while !Task.isCancelled {
            metrics.inFlightNotifications.record(await gate.inFlight)
            for (app, provider, open) in pusher.openConnections { ServiceMetrics.of(provider).connections(app: app, open: open) }
            if tick % Self.queueEvery == 0 { await sampleQueues(withAges: tick % Self.agesEvery == 0) }
            tick &+= 1
            try? await Task.sleep(for: .seconds(1))
        }
    }

    /// Skipped when a shard's Redis does not answer: the gauges keep their last values, and readiness
    /// and the reconnect counter tell the story.
    private func sampleQueues(withAges: Bool) async {
        var lengths = (queue: 0, dlq: 0, feedback: 0, bulk: 0)
        // The oldest message of each input list, over the shards (its consumer end's `enqueued_at`).
        var oldest = (queue: Int64(0), bulk: Int64(0))
        let now = WallClock.nowMillis()
        for queue in queues {
            let keys = queue.keys
            guard let replies = try? await queue.connection.pipeline(
                [["LLEN", keys.queue], ["LLEN", keys.deadLetters], ["LLEN", keys.feedback], ["LLEN", keys.deadLetterHold],
                 ["LLEN", keys.bulkQueue]].map { $0.map { Array($0.utf8) } }
                + (withAges ? [QueuedAge.oldestCommand(list: keys.queue, maxElementBytes: maxElementBytes),
                               QueuedAge.oldestCommand(list: keys.bulkQueue, maxElementBytes: maxElementBytes)].map { $0.map { Array($0.utf8) } } : []))
            else { return }
            let values = replies.map { Int(clamping: $0.integer ?? 0) }
            guard values.count == (withAges ? 7 : 5) else { return }
            lengths.bulk += values[4]
            lengths.queue += values[0]
            // Dead letters a running replay walked past and keeps are dead letters still.
            lengths.dlq += values[1] + values[3]
            lengths.feedback += values[2]
            if withAges {
                oldest.queue = max(oldest.queue, QueuedAge.millis(enqueuedAt: replies[5], nowMillis: now) ?? 0)
                oldest.bulk = max(oldest.bulk, QueuedAge.millis(enqueuedAt: replies[6], nowMillis: now) ?? 0)
            }
        }
        metrics.queueLength(list: "queue", length: lengths.queue)
        metrics.queueLength(list: "bulk", length: lengths.bulk)
        metrics.queueLength(list: "dlq", length: lengths.dlq)
        metrics.queueLength(list: "feedback", length: lengths.feedback)
        if withAges {
            metrics.queueOldestAge(list: "queue", seconds: oldest.queue / 1000)
            metrics.queueOldestAge(list: "bulk", seconds: oldest.bulk / 1000)
        }
    }
}
