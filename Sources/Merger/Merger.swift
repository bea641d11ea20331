import PushCore

/// Coalesces the group and system messages of one window that carry the same content to different
/// receivers (identical topic, push headers and payload, and the same `uuid` where given) into one job
/// with the union of their tokens. Private messages pass through one job each.
public struct Merger: Sendable {
    public init() {}

    private struct MergeKey: Hashable {
        var headers: PushHeaders
        var payload: [UInt8]
        var uuid: String?
    }

    public func merge(_ batch: consuming MessageBatch) -> [PushJob] {
        guard batch.kind != .private, batch.messages.count > 1 else {
            return Self.oneJobEach(batch.takeMessages())
        }
        var jobs: [PushJob] = []
        var jobIndex: [MergeKey: Int] = [:]
        // Built lazily, only for jobs that actually receive a second message.
        var tokenIndex: [Int: [String: Int]] = [:]
        for message in batch.messages {
            let key = MergeKey(headers: message.headers, payload: message.payload, uuid: message.uuid)
            guard let index = jobIndex[key] else {
                jobIndex[key] = jobs.count
                jobs.append(PushJob(message: message))
                continue
            }
            // Mutate in place: a copy of the job would copy its token arrays on every merge.
            var known = tokenIndex[index] ?? Dictionary(uniqueKeysWithValues: jobs[index].tokens.enumerated().map { ($1, $0) })
            tokenIndex[index] = nil
            if jobs[index].owner.isEmpty {
                jobs[index].owner = Array(repeating: 0, count: jobs[index].tokens.count)
            }
            let owner = jobs[index].addSource(seq: message.seq, id: message.id)
            if let enqueued = message.enqueuedAtMillis {
                jobs[index].enqueuedAtMillis = min(jobs[index].enqueuedAtMillis ?? enqueued, enqueued)
            }
            for token in message.tokens {
                if let existing = known[token] {
                    jobs[index].extraOwners[existing, default: []].append(owner)
                } else {
                    known[token] = jobs[index].tokens.count
                    jobs[index].tokens.append(token)
                    jobs[index].owner.append(owner)
                }
            }
            tokenIndex[index] = known
        }
        return jobs
    }

    /// One job per message, each message moved into its job: `map(PushJob.init)` copied every message (a
    /// retain of each of its strings and arrays) and then destroyed the batch (a release of each).
    /// Reversed in place through the buffer, so that `popLast`, which moves the element out, takes them
    /// in order.
    private static func oneJobEach(_ messages: consuming [PushMessage]) -> [PushJob] {
        var remaining = messages
        var jobs: [PushJob] = []
        jobs.reserveCapacity(remaining.count)
        remaining.withUnsafeMutableBufferPointer { $0.reverse() }
        while let message = remaining.popLast() { jobs.append(PushJob(message: message)) }
        return jobs
    }

    /// The stage: batches in, jobs out.
    public func run(input: AsyncStream<MessageBatch>, output: AsyncStream<[PushJob]>.Continuation) async {
        let merged = PushMetrics.shared.messagesMerged
        for await batch in input {
            // Counted first: the batch is handed over to `merge`, so that its messages move into the jobs.
            let messages = batch.messages.count
            let jobs = merge(batch)
            // Every message beyond the first of its job was folded into another message's job.
            merged.increment(by: messages - jobs.count)
            output.yield(jobs)
        }
        output.finish()
    }
}
