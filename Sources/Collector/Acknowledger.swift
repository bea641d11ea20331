import Logging
import PushCore

/// Everything the acknowledging side hears, in one stream so that a message's registration is always
/// seen before any of its results.
public enum AcknowledgerEvent: Sendable {
    case claimed([ClaimRegistration])
    case result(PipelineResult)
    /// Asks for claimed elements this worker no longer tracks (a claim whose reply was lost).
    case findOrphans(CheckedContinuation<[[UInt8]], Never>)
    case flushDue
}

/// Acknowledges finished messages: their outcome records and the removal from the processing list are
/// written in one atomic script call per batch, then their capacity is released to the collector.
public final class Acknowledger: Sendable {
    public let events: AsyncStream<AcknowledgerEvent>
    public let input: AsyncStream<AcknowledgerEvent>.Continuation
    private let queue: WorkQueue
    private let gate: CapacityGate
    private let filteredCap: Int
    private let logger: Logger
    private let counts: SharedCounts

    public init(queue: WorkQueue, gate: CapacityGate, filteredCap: Int, counts: SharedCounts, logger: Logger) {
        (events, input) = AsyncStream.makeStream(of: AcknowledgerEvent.self)
        self.queue = queue
        self.gate = gate
        self.filteredCap = filteredCap
        self.counts = counts
        self.logger = logger
    }

    /// Runs until the input is finished and every completed message has been written.
    public func run() async {
        var ledger = OutcomeLedger(workerID: queue.workerID)
        var pending: [CompletedMessage] = []
        var flushScheduled = false
        for await event in events {
            switch event {
            case .claimed(let claims):
                for claim in claims { ledger.register(claim, into: &pending) }
            case .result(.resolved(let resolutions)):
                for resolution in resolutions { ledger.resolve(resolution, into: &pending) }
            case .result(.filtered(let seqs, _, let topic, let word)):
                for seq in seqs { ledger.filter(seq: seq, topic: topic, word: word, into: &pending) }
            case .findOrphans(let reply):
                await flush(&pending, &ledger)
                reply.resume(returning: await orphans(tracked: ledger.trackedRaws))
            case .flushDue:
                flushScheduled = false
                await flush(&pending, &ledger)
            }
            // Small batches go out after a short delay so that many acks share one round trip.
            if pending.count >= 512 {
                await flush(&pending, &ledger)
            } else if !pending.isEmpty && !flushScheduled {
                flushScheduled = true
                let input = self.input
                Task {
                    try? await Task.sleep(for: .milliseconds(2))
                    input.yield(.flushDue)
                }
            }
            counts.store(ledger.snapshot)
        }
        await flush(&pending, &ledger)
        counts.store(ledger.snapshot)
    }

    private func flush(_ pending: inout [CompletedMessage], _ ledger: inout OutcomeLedger) async {
        guard !pending.isEmpty else { return }
        var backoff = Backoff(initialMillis: 50, maxMillis: 2000)
        while true {
            do {
                let acknowledged = try await queue.acknowledge(pending, filteredCap: filteredCap)
                if acknowledged < pending.count {
                    logger.warning("some messages were no longer claimed by this worker (recovered elsewhere); their outcomes were not written twice",
                                   metadata: ["expected": "\(pending.count)", "acknowledged": "\(acknowledged)"])
                }
                ledger.noteAcknowledged(acknowledged)
                break
            } catch {
                // The processing list still holds these messages, so waiting loses nothing.
                logger.error("acknowledgement failed; retrying", metadata: ["error": "\(error)", "messages": "\(pending.count)"])
                try? await Task.sleep(for: .milliseconds(backoff.next()))
            }
        }
        let released = pending.reduce(0) { $0 + $1.notifications }
        pending.removeAll(keepingCapacity: true)
        await gate.release(released)
    }

    private func orphans(tracked: [[UInt8]]) async -> [[UInt8]] {
        var backoff = Backoff(initialMillis: 50, maxMillis: 2000)
        while true {
            do {
                var known: [[UInt8]: Int] = [:]
                for raw in tracked { known[raw, default: 0] += 1 }
                var found: [[UInt8]] = []
                for raw in try await queue.claimedElements() {
                    if let count = known[raw], count > 0 { known[raw] = count - 1 } else { found.append(raw) }
                }
                return found
            } catch {
                logger.error("cannot read the processing list; retrying", metadata: ["error": "\(error)"])
                try? await Task.sleep(for: .milliseconds(backoff.next()))
            }
        }
    }
}
