/// Which input list a message came from (docs/redis-keys.md): `push:queue` for pushes a person is waiting for,
/// `push:queue:bulk` for broadcasts and campaigns, which never go ahead of them.
///
/// The lane travels inside the numbers the pipeline already carries: a bulk claim's sequence is the claim
/// counter plus `bulkSequenceBase` (2^52, far above any count of claims), so the processing hash's field says
/// where recovery must return the element, and every pipeline seq, job source and result says its lane,
/// without another key or field.
public enum Lane: String, Sendable, CaseIterable {
    case chat = "queue"
    case bulk = "bulk"

    /// Added to the claim counter for elements claimed from the bulk list.
    public static let bulkSequenceBase: UInt64 = 1 << 52

    /// The lane of a claim sequence (the processing hash's field).
    public static func of(claimSequence seq: UInt64) -> Lane { seq >= bulkSequenceBase ? .bulk : .chat }

    /// The lane of a pipeline seq (`PipelineSeq`).
    public static func of(pipelineSeq seq: UInt64) -> Lane { seq >= bulkSequenceBase << PipelineSeq.shardBits ? .bulk : .chat }

    /// The label value of `list` in the metrics (`queue`, `bulk`).
    public var metricLabel: String { rawValue }
}

/// A message's number in the pipeline, by which results find their message: its claim sequence (below 2^53,
/// from Redis; its lane in it) with the index of the worker's shard in the low 6 bits. Made by the collector,
/// read by the transport (the shard's ownership lease) and the result router.
public enum PipelineSeq {
    public static let shardBits = 6
    /// A worker consumes at most this many shards.
    public static let maxShards = 1 << shardBits

    public static func make(claimSequence: UInt64, shard: Int) -> UInt64 {
        claimSequence << shardBits | UInt64(shard & (maxShards - 1))
    }

    /// The shard a pipeline seq belongs to.
    public static func shard(of seq: UInt64) -> Int { Int(seq & UInt64(maxShards - 1)) }
}
