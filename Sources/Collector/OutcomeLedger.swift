import PushCore
import QueueProtocol

/// What the collector tells the acknowledging side about a claimed element, before any of its tokens
/// can have an outcome.
public struct ClaimRegistration: Sendable {
    /// The element's number in the processing hash.
    public var claimSequence: UInt64
    /// The element's size, for the gate. The bytes themselves stay with the collector, which frees them on its
    /// own thread once parsed (a dead letter reads them back from the processing hash: `DeadLetterDraft`).
    public var bytes: Int
    /// Earlier holders of the element died (`ClaimedElement.counted`).
    public var counted: Bool
    public var messageID: String
    public var appTopic: String
    /// Where its tokens go (for the `provider` label of `push_notifications_total`).
    public var provider: PushProvider
    /// Tokens still to reach an outcome; 0 completes the message at once (invalid input).
    public var pendingTokens: Int
    /// Counted in the in-flight gate: one per pending token (at least one). Each token's room comes back as
    /// the token reaches its outcome; the message's last one (and its bytes) at acknowledgement.
    public var notifications: Int
    /// Records known at claim time: a dead letter for invalid input, feedback for malformed tokens.
    public var records: [OutcomeRecord]

    /// The message's number in the pipeline (results are addressed by it): the claim sequence, with the
    /// shard in its low bits when the worker consumes several shards.
    public var seq: UInt64

    public init(element: ClaimedElement, seq: UInt64? = nil, messageID: String, appTopic: String, provider: PushProvider = .default,
                pendingTokens: Int, notifications: Int, records: [OutcomeRecord]) {
        claimSequence = element.seq
        bytes = element.raw.count
        counted = element.counted
        self.seq = seq ?? element.seq
        self.messageID = messageID
        self.appTopic = appTopic
        self.provider = provider
        self.pendingTokens = pendingTokens
        self.notifications = notifications
        self.records = records
    }
}

/// Per-message bookkeeping: collects every token's outcome and, when the last one is in, turns the
/// message into a `CompletedMessage` with its records. Pure logic; the Acknowledger does the I/O.
public struct OutcomeLedger: Sendable {
    private struct Failure: Hashable { var reason: String; var status: Int?; var detail: String? }

    /// Up to `max_in_flight` of these live in a dictionary at once: its fields are ordered and sized to keep
    /// the entry at 80 bytes (112 with word-sized counts and the pipeline seq, which is its key, kept twice).
    private struct Entry: Sendable {
        var seq: UInt64
        var messageID: String
        var appTopic: String
        var records: [OutcomeRecord]
        var failures: [Failure: [String]] = [:]
        /// The element's size, for the gate. The element itself is not kept: a dead letter reads it back from
        /// the processing hash at acknowledgement (`DeadLetterDraft`).
        var bytes: Int32
        var remaining: Int32
        /// What the message still holds in the in-flight gate: one per unresolved token, and one until it is
        /// acknowledged.
        var notifications: Int32
        var attempts: Int32 = 0
        var counted: Bool
        var provider: PushProvider
        /// Recovery gave the claim to another worker (ownership fencing): its tokens are only counted
        /// down, and it ends without acknowledgement or records.
        var lost = false
    }

    public let workerID: String
    private var entries: [UInt64: Entry] = [:]
    public private(set) var counts = OutcomeCounts()
    /// Room of tokens that reached their outcome, not yet given back to the gate (see `takeReleased`).
    private var released = (chat: 0, bulk: 0)
    /// Final outcomes per token by app (`push_notifications_total`), not yet handed to the metrics.
    private var outcomes = OutcomeTally()

    public init(workerID: String) { self.workerID = workerID }


    /// Claim sequences of every message still tracked (for reconciliation with the processing hash).
    public var trackedSequences: Set<UInt64> { Set(entries.values.map(\.seq)) }

    /// Starts tracking a claimed message. False if its sequence is already tracked (a claim identity handed
    /// out twice, which the claim script's floor rules out); the tracked message is kept.
    @discardableResult
    public mutating func register(_ claim: ClaimRegistration, into completed: inout [CompletedMessage]) -> Bool {
        let entry = Entry(seq: claim.claimSequence, messageID: claim.messageID, appTopic: claim.appTopic, records: claim.records,
                          bytes: Int32(clamping: claim.bytes), remaining: Int32(clamping: claim.pendingTokens),
                          notifications: Int32(clamping: claim.notifications), counted: claim.counted, provider: claim.provider)
        if claim.pendingTokens == 0 {
            if entries[claim.seq] != nil { return false }
            if entry.records.contains(where: { if case .deadLetter = $0 { return true } else { return false } }) {
                counts.deadLettered += 1
            }
            completed.append(finish(entry, pipelineSeq: claim.seq))
        } else if let tracked = entries.updateValue(entry, forKey: claim.seq) {
            // One hash per registration (a lookup first, then the insert, hashed twice): inserted, and in the rare
            // case the sequence was tracked already, the tracked message put back.
            entries[claim.seq] = tracked
            return false
        }
        counts.feedback += claim.records.count { if case .feedback = $0 { return true } else { return false } }
        return true
    }

    /// The tracked messages whose claim sequence is not among `held` (what the processing hash still holds):
    /// recovery took them. They are marked lost and their pipeline seqs returned; nothing of them will be
    /// acknowledged or recorded here.
    public mutating func markLost(keeping held: Set<UInt64>) -> [UInt64] {
        var lost: [UInt64] = []
        for (key, entry) in entries where !entry.lost && !held.contains(entry.seq) {
            entries[key]?.lost = true
            lost.append(key)
        }
        counts.claimsLost += lost.count
        return lost.sorted()
    }

    /// The ids of tracked messages (for logs), by pipeline seq.
    public func messageIDs(_ seqs: [UInt64]) -> [String] { seqs.compactMap { entries[$0]?.messageID } }

    public mutating func resolve(_ resolution: Resolution, into completed: inout [CompletedMessage]) {
        // Moved out and, unless this was its last token, back in: a copy would retain and release each of its
        // arrays and strings once per token. (Mutating through `entries.values[index]` copied the whole
        // dictionary each time.)
        guard var entry = entries.removeValue(forKey: resolution.seq) else { return }
        count(resolution.outcome, of: entry)
        if entry.lost {
            // Whatever this token's outcome was here, the message's new holder decides its records.
            entry.remaining -= 1
            releaseToken(of: &entry, pipelineSeq: resolution.seq)
            if entry.remaining <= 0 {
                completed.append(CompletedMessage(seq: entry.seq, counted: entry.counted, records: [],
                                                  notifications: Int(entry.notifications), bytes: Int(entry.bytes),
                                                  pipelineSeq: resolution.seq, lost: true))
            } else {
                entries[resolution.seq] = entry
            }
            return
        }
        switch resolution.outcome {
        case .delivered:
            counts.delivered += 1
        case .feedback(let reason, let timestamp):
            counts.feedback += 1
            entry.records.append(.feedback(OutcomeRecords.feedback(
                token: resolution.token, topic: entry.appTopic, reason: reason, timestampMillis: timestamp,
                messageID: entry.messageID, provider: entry.provider)))
        case .failed(let reason, let status, let attempts, let detail):
            counts.deadLettered += 1
            entry.failures[Failure(reason: reason, status: status, detail: detail), default: []].append(resolution.token)
            entry.attempts = max(entry.attempts, Int32(clamping: attempts))
        case .claimLost:
            break  // only for a lost entry (above); the transport drops nothing it was not told to
        }
        entry.remaining -= 1
        releaseToken(of: &entry, pipelineSeq: resolution.seq)
        if entry.remaining <= 0 {
            completed.append(finish(entry, pipelineSeq: resolution.seq))
        } else {
            entries[resolution.seq] = entry
        }
    }

    /// The filter dropped the message: whatever tokens were pending end in the audit list.
    public mutating func filter(seq: UInt64, topic: String, word: String, into completed: inout [CompletedMessage]) {
        guard var entry = entries.removeValue(forKey: seq) else { return }
        if entry.lost {
            completed.append(CompletedMessage(seq: entry.seq, counted: entry.counted, records: [], notifications: Int(entry.notifications),
                                              bytes: Int(entry.bytes), pipelineSeq: seq, lost: true))
            return
        }
        counts.filteredMessages += 1
        entry.records.append(.filtered(OutcomeRecords.filtered(
            messageID: entry.messageID, topic: topic, matched: word, filteredAtMillis: WallClock.nowMillis(),
            provider: entry.provider)))
        completed.append(finish(entry, pipelineSeq: seq))
    }

    /// A token of the message reached its outcome: its room goes back at once, except the message's last unit,
    /// which its acknowledgement gives back. Room per token keeps a large message's tail from idling the
    /// pipeline: the next message is claimed while the last requests of this one are on the wire.
    private mutating func releaseToken(of entry: inout Entry, pipelineSeq: UInt64) {
        guard entry.notifications > 1 else { return }
        entry.notifications -= 1
        if Lane.of(pipelineSeq: pipelineSeq) == .bulk { released.bulk += 1 } else { released.chat += 1 }
    }

    /// A token's final outcome in `push_notifications_total`, under its message's provider and app. A claim lost
    /// to recovery is counted by its new holder.
    private mutating func count(_ outcome: TokenOutcome, of entry: Entry) {
        switch outcome {
        case .delivered:
            outcomes.add(provider: entry.provider, app: entry.appTopic, outcome: "delivered", reason: "")
        case .feedback(let reason, _):
            outcomes.add(provider: entry.provider, app: entry.appTopic, outcome: "feedback", reason: reason)
        case .failed(let reason, _, _, _):
            outcomes.add(provider: entry.provider, app: entry.appTopic, outcome: "dead_letter", reason: reason)
        case .claimLost:
            break
        }
    }

    /// The outcomes counted since the last call, by provider, app, outcome and reason.
    public mutating func takeOutcomes() -> [OutcomeTally.Key: Int] { outcomes.take() }

    /// The room of tokens resolved since the last call, per lane, for the caller to give back to the gate.
    public mutating func takeReleased() -> (chat: Int, bulk: Int) {
        defer { released = (0, 0) }
        return released
    }

    public mutating func noteAcknowledged(_ count: Int) { counts.acknowledgedMessages += count }

    public var snapshot: OutcomeCounts {
        var result = counts
        result.trackedMessages = entries.count
        return result
    }

    private func finish(_ entry: Entry, pipelineSeq: UInt64) -> CompletedMessage {
        guard !entry.failures.isEmpty else {
            return CompletedMessage(seq: entry.seq, counted: entry.counted, records: entry.records,
                                    notifications: Int(entry.notifications), bytes: Int(entry.bytes), pipelineSeq: pipelineSeq)
        }
        let now = WallClock.nowMillis()
        // One dead letter per distinct failure, carrying the tokens that failed that way; made from the
        // element when the message is acknowledged.
        let drafts = entry.failures.sorted(by: { ($0.key.reason, $0.key.detail ?? "") < ($1.key.reason, $1.key.detail ?? "") }).map { failure, tokens in
            DeadLetterDraft(failedTokens: tokens, reason: failure.reason, status: failure.status,
                            attempts: Int(entry.attempts), failedAtMillis: now, worker: workerID, detail: failure.detail)
        }
        return CompletedMessage(seq: entry.seq, counted: entry.counted, records: entry.records, deadLetters: drafts,
                                notifications: Int(entry.notifications), bytes: Int(entry.bytes), pipelineSeq: pipelineSeq)
    }
}
