/// One push job: a payload with its headers and the tokens it goes to. A private message is one job;
/// merged group/system messages share one job whose tokens map back to every source message.
public struct PushJob: Sendable {
    public var headers: PushHeaders
    public var payload: [UInt8]
    public var tokens: [String]
    /// The first source message's sequence number and id. Nearly every job has one source: the others live
    /// apart, so that a job of one message carries no array of sources (two allocations per message in flight).
    public private(set) var firstSource: UInt64
    public private(set) var firstSourceID: String
    private var laterSources: [UInt64] = []
    private var laterSourceIDs: [String] = []
    /// For each token, the index into `sources` of the first message that asked for it; empty while every
    /// token's first owner is the first source (a job of one message: no array per message in flight).
    public var owner: [UInt32]
    /// Token index -> further owners, for a token that several merged messages asked for (rare).
    public var extraOwners: [Int: [UInt32]]
    public var kind: MessageKind
    /// The oldest `enqueued_at` of the job's messages, for the queue-to-service latency
    /// (`push_queue_to_<service>_seconds`).
    public var enqueuedAtMillis: Int64?

    /// Consuming: the message's strings and arrays move into the job. Taken out with `swap`, which moves:
    /// reading the fields copied them (a retain each, then a release each with the message), and the topic
    /// strings are shared by every message of an app, so their counts were written from every thread.
    public init(message: consuming PushMessage) {
        var message = message
        headers = PushHeaders(topic: "", appTopic: "", pushType: "", priority: 0, expiration: 0, collapseID: nil)
        payload = []
        tokens = []
        firstSourceID = ""
        swap(&headers, &message.headers)
        swap(&payload, &message.payload)
        swap(&tokens, &message.tokens)
        swap(&firstSourceID, &message.id)
        firstSource = message.seq
        owner = []
        extraOwners = [:]
        kind = message.kind
        enqueuedAtMillis = message.enqueuedAtMillis
    }

    /// Sequence numbers of the source messages, in the order they joined the job (an array made per call).
    public var sources: [UInt64] { [firstSource] + laterSources }
    /// The source ids for logs and filtered records, parallel to `sources` (an array made per call).
    public var sourceIDs: [String] { [firstSourceID] + laterSourceIDs }

    /// The source at `index` of `sources`, without making the array.
    public func source(at index: Int) -> UInt64 { index == 0 ? firstSource : laterSources[index - 1] }

    /// A merged message joins the job; returns its index in `sources` (what `owner` holds).
    @discardableResult
    public mutating func addSource(seq: UInt64, id: String) -> UInt32 {
        laterSources.append(seq)
        laterSourceIDs.append(id)
        return UInt32(laterSources.count)
    }

    /// The first source message that asked for token `index` (the only one unless merged messages shared it).
    public func firstOwner(ofToken index: Int) -> UInt64 { source(at: owner.isEmpty ? 0 : Int(owner[index])) }

    /// Calls `body` with every source message that asked for token `index`, first owner first, without
    /// building an array (the transport does this once per answer).
    public func forEachOwner(ofToken index: Int, _ body: (UInt64) -> Void) {
        body(firstOwner(ofToken: index))
        guard !extraOwners.isEmpty, let extra = extraOwners[index] else { return }
        for owner in extra { body(source(at: Int(owner))) }
    }

    /// Every source message that asked for token `index`.
    public func owners(ofToken index: Int) -> [UInt64] {
        var result: [UInt64] = []
        forEachOwner(ofToken: index) { result.append($0) }
        return result
    }
}

/// How one token of one message ended.
public enum TokenOutcome: Sendable, Equatable {
    case delivered
    /// The backend must stop using the token (docs/redis-keys.md: Unregistered, ExpiredToken, BadDeviceToken, DeviceTokenNotForTopic).
    case feedback(reason: String, timestampMillis: Int64)
    /// Dead letter: a permanent error from the service, exhausted retries, expiry, or our own reason.
    /// `detail`: the service's own words (an error message), where `reason` is its code.
    case failed(reason: String, status: Int?, attempts: Int, detail: String? = nil)
    /// Not sent: recovery gave the message's claim to another worker while this one could not reach Redis
    /// (ownership fencing, docs/queue-protocol.md). Not an outcome of the message: its new holder sends it.
    case claimLost
}

/// A token's final outcome, addressed to the message that owns it.
public struct Resolution: Sendable {
    public var seq: UInt64
    public var token: String
    public var outcome: TokenOutcome

    public init(seq: UInt64, token: String, outcome: TokenOutcome) {
        self.seq = seq
        self.token = token
        self.outcome = outcome
    }
}

/// What flows back from Filter and Pusher to the acknowledging side of the Collector.
public enum PipelineResult: Sendable {
    case resolved([Resolution])
    /// The sensitive-word filter dropped these messages (every token of each).
    case filtered(seqs: [UInt64], ids: [String], topic: String, word: String)
}
