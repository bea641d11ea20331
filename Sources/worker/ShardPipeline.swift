import Collector
import Logging
import PushCore
import QueueProtocol
import RedisClient

/// The claiming and acknowledging side of one shard (one key set, docs/queue-protocol.md): its Redis connections,
/// Collector, Acknowledger and Heartbeat. Merger, Filter and Pusher are shared by all shards; results find
/// their shard by the low bits of their pipeline seq.
struct ShardPipeline: Sendable {
    let index: Int
    let keys: RedisKeys
    let claimQueue: WorkQueue
    let ackQueue: WorkQueue
    let recoveryQueue: WorkQueue
    /// The metrics sampler's: a slow queue-length read never delays a beat.
    let metricsQueue: WorkQueue
    let heartbeat: Heartbeat
    let acknowledger: Acknowledger
    let collector: Collector
    /// Puts parked messages (isolation) back on the queue when their app can send again.
    let unparker: Unparker
    let counts = SharedCounts()

    init(index: Int, prefix: String, configuration: WorkerConfiguration, workerID: String, gate: CapacityGate, logger: Logger,
         readiness: Readiness, lease: OwnershipLease, clusterMap: ClusterMap?, waitBoard: AppWaitBoard) {
        self.index = index
        let keys = RedisKeys(prefix: prefix)
        self.keys = keys
        let redis = configuration.redis
        let queue = { (name: String) -> WorkQueue in
            // A shard's keys share one hash slot: its connections follow that slot across a Redis Cluster
            // (through the topology every connection of the worker shares), or the primary Sentinel names,
            // each on a thread of its own.
            let connection = RedisConnector.connection(redis, shard: prefix, name: "\(name)\(index)", map: clusterMap)
            return WorkQueue(connection: connection, keys: keys, workerID: workerID, maxDeliveries: configuration.recovery.maxDeliveries,
                             maxElementBytes: configuration.collector.maxElementBytes,
                             retention: (configuration.retention.deadLettersMax, configuration.retention.feedbackMax))
        }
        claimQueue = queue("claim")
        ackQueue = queue("ack")
        recoveryQueue = queue("recovery")
        metricsQueue = queue("metrics")
        unparker = Unparker(queue: queue("unpark"), board: waitBoard, logger: logger)
        let acknowledger = Acknowledger(queue: ackQueue, gate: gate, filteredCap: configuration.filter.auditCap,
                                        counts: counts, logger: logger, lease: lease,
                                        replication: (configuration.redis.waitReplicas, configuration.redis.waitTimeoutMillis),
                                        shard: index)
        self.acknowledger = acknowledger
        heartbeat = Heartbeat(queue: queue("heartbeat"), recoveryQueue: recoveryQueue,
                              ttlMillis: configuration.redis.heartbeatTTLMillis, logger: logger, readiness: readiness,
                              lease: lease, shard: index, confirmOwnership: { await acknowledger.confirmOwnership() })
        collector = Collector(settings: configuration.collector, queue: claimQueue, gate: gate,
                              acknowledger: acknowledger.input, logger: logger, shard: index, lease: lease, waitBoard: waitBoard,
                              parkedMax: configuration.retention.parkedMax)
    }

    /// Ends the Redis calls in progress of the claiming and acknowledging side at once (the shutdown deadline
    /// has passed: whatever they were waiting for, a silent Redis must not hold the exit).
    func interruptStages() {
        claimQueue.connection.interrupt()
        ackQueue.connection.interrupt()
    }

    /// The same for the heartbeat, recovery and metrics loops, once they are cancelled.
    func interruptBackground() {
        heartbeat.queue.connection.interrupt()
        recoveryQueue.connection.interrupt()
        metricsQueue.connection.interrupt()
        unparker.queue.connection.interrupt()
    }

    func close() async {
        for queue in [claimQueue, ackQueue, recoveryQueue, metricsQueue, heartbeat.queue, unparker.queue] { await queue.connection.close() }
    }
}

/// Sends each result to the Acknowledger of the shard its message came from.
struct ResultRouter: Sendable {
    let inputs: [AsyncStream<AcknowledgerEvent>.Continuation]

    func route(_ result: PipelineResult) {
        if inputs.count == 1 {
            inputs[0].yield(.result(result))
            return
        }
        switch result {
        case .resolved(let resolutions):
            var perShard = [[Resolution]](repeating: [], count: inputs.count)
            for resolution in resolutions { perShard[Collector.shard(ofPipelineSeq: resolution.seq)].append(resolution) }
            for (shard, part) in perShard.enumerated() where !part.isEmpty { inputs[shard].yield(.result(.resolved(part))) }
        case .filtered(let seqs, let ids, let topic, let word):
            var perShard = [(seqs: [UInt64], ids: [String])](repeating: ([], []), count: inputs.count)
            for (seq, id) in zip(seqs, ids) {
                let shard = Collector.shard(ofPipelineSeq: seq)
                perShard[shard].seqs.append(seq)
                perShard[shard].ids.append(id)
            }
            for (shard, part) in perShard.enumerated() where !part.seqs.isEmpty {
                inputs[shard].yield(.result(.filtered(seqs: part.seqs, ids: part.ids, topic: topic, word: word)))
            }
        }
    }

    func finish() { inputs.forEach { $0.finish() } }
}
