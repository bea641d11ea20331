import PushCore

/// Request headers in a driver's own form, shared by every job with the same push headers and provider
/// token: chat traffic is mostly one topic, push type, priority and expiration, so one header block serves
/// thousands of one-token jobs instead of being built and freed for each. Bounded; confined to the
/// transport thread.
struct HeaderCache<Block: AnyObject> {
    private struct Key: Hashable {
        var headers: PushHeaders
        var generation: Int
    }
    private var blocks: [Key: Block] = [:]
    /// The block found last: consecutive jobs nearly always share their headers, and comparing them is
    /// cheaper than hashing them.
    private var last: (key: Key, block: Block)?
    /// Distinct header sets kept at most; past it the cache starts again (a flood of unique collapse ids).
    static var capacity: Int { 1024 }

    mutating func block(for job: JobContext, generation: Int, build: () -> Block) -> Block {
        job.headers(generation: generation) {
            let key = Key(headers: job.job.headers, generation: generation)
            if let last, last.key == key { return last.block }
            if let known = blocks[key] {
                last = (key, known)
                return known
            }
            if blocks.count >= Self.capacity { blocks.removeAll(keepingCapacity: true) }
            let made = build()
            blocks[key] = made
            last = (key, made)
            return made
        }
    }
}
