import PushCore

/// Passes jobs on, except those the word filter drops: these are reported as filtered results, so the
/// collector side acknowledges them and records them in the audit list. They are never sent.
public struct FilterStage: Sendable {
    public let live: LiveFilter

    public init(filter: LiveFilter) { self.live = filter }

    public func run(input: AsyncStream<[PushJob]>,
                    output: AsyncStream<[PushJob]>.Continuation,
                    results: @Sendable (PipelineResult) -> Void) async {
        for await jobs in input {
            // One list per batch: a reload swaps lists between batches, never inside one.
            let filter = live.current
            if filter.matcher.isEmpty {
                output.yield(jobs)
                continue
            }
            var kept: [PushJob] = []
            kept.reserveCapacity(jobs.count)
            for job in jobs {
                if let word = filter.match(job) {
                    // Every token of every message in the job ends filtered; the word itself stays out of labels.
                    let tokens = job.tokens.count + job.extraOwners.values.reduce(0) { $0 + $1.count }
                    PushMetrics.shared.notifications(provider: job.headers.provider, app: job.headers.appTopic, outcome: "filtered",
                                                     reason: "SensitiveWord", count: tokens)
                    results(.filtered(seqs: job.sources, ids: job.sourceIDs, topic: job.headers.appTopic, word: word))
                } else {
                    kept.append(job)
                }
            }
            if !kept.isEmpty { output.yield(kept) }
        }
        output.finish()
    }
}
