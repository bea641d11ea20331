import ProviderKit
import PushCore

/// Request headers in a driver's own form, shared by every job with the same push headers and provider
/// token: chat traffic is mostly one topic, push type, priority and expiration, so one header block serves
/// thousands of one-token jobs instead of being built and freed for each. Bounded; confined to the
/// transport thread.
struct HeaderCache<Block: AnyObject> {
    private struct Key: Hashable {
        var headers: PushHeaders
        var generation: Int
        var epoch: Int64
    }
    private var blocks: [Key: Block] = [:]
    /// The block found last: consecutive jobs nearly always share their headers, and comparing them is
    /// cheaper than hashing them. Kept as separate fields, compared in place: binding a stored (key, block)
    /// pair copied the key's strings, a retain and a release each, for every job.
    /// Matches no job until the first block is made (no push type is empty).
    private var lastHeaders = PushHeaders(topic: "", appTopic: "", pushType: "", priority: 0, expiration: 0, collapseID: nil)
    private var lastGeneration = -1
    private var lastEpoch: Int64 = 0
    private var lastBlock: Block?
    /// Distinct header sets kept at most; past it the cache starts again (a flood of unique collapse ids).
    static var capacity: Int { 1024 }

    /// `build` gets the job and the bearer as arguments rather than capturing them: a closure capturing the
    /// caller's request copied it (a retain of each of its references) on every call, built or not.
    /// `epoch`: the time slice of a service whose headers carry the time (`PushService.headerLifetimeMillis`), 0
    /// otherwise: a block is built again in each.
    mutating func block(for job: JobContext, generation: Int, epoch: Int64, bearer: String?,
                        build: (JobContext, String?) -> Block) -> Block {
        job.headers(generation: generation, epoch: epoch) {
            if lastGeneration == generation, lastEpoch == epoch, let lastBlock, PushHeaders.same(lastHeaders, job.job.headers) {
                return lastBlock
            }
            let key = Key(headers: job.job.headers, generation: generation, epoch: epoch)
            let block: Block
            if let known = blocks[key] {
                block = known
            } else {
                if blocks.count >= Self.capacity { blocks.removeAll(keepingCapacity: true) }
                block = build(job, bearer)
                blocks[key] = block
            }
            lastHeaders = key.headers
            lastGeneration = generation
            lastEpoch = epoch
            lastBlock = block
            return block
        }
    }
}
