import PushCore

/// The Redis key names of docs/redis-keys.md. They are public API: producers and tools depend on them.
/// With `redis.shards`, each shard is a prefix with a Redis Cluster hash tag (`push:{0}`), so every key of
/// one shard lives in one slot and every script stays single-slot.
public struct RedisKeys: Sendable, Equatable {
    public let prefix: String

    public init(prefix: String = "push") { self.prefix = prefix }

    /// Input list: producers LPUSH, workers claim from the other end.
    public var queue: String { "\(prefix):queue" }
    /// Input list of work that may wait (broadcasts, campaigns): never ahead of `queue` (docs/redis-keys.md).
    public var bulkQueue: String { "\(prefix):queue:bulk" }
    /// The input list of a lane.
    public func queue(_ lane: Lane) -> String { lane == .bulk ? bulkQueue : queue }
    public var deadLetters: String { "\(prefix):dlq" }
    /// Dead letters a running replay walked past and kept, oldest at the tail; put back at the dlq's oldest
    /// end when the replay ends (or by the next replay or purge, if it was interrupted).
    public var deadLetterHold: String { "\(prefix):dlq:hold" }
    public var feedback: String { "\(prefix):feedback" }
    public var filtered: String { "\(prefix):filtered" }
    /// A receipt already turned into a feedback entry: a string that lives a day, named by the SHA-1 of the receipt's
    /// provider, app, token and message id, so that a service sending the same receipt again adds nothing.
    public func receiptSeen(digest: String) -> String { "\(prefix):receipt-seen:\(digest)" }
    /// Registry of workers: sorted set, member = worker id, score = last heartbeat (UNIX ms).
    public var workers: String { "\(prefix):workers" }
    /// Claim sequence counter: every claimed element gets the next number, so the oldest claim is the lowest.
    public var sequence: String { "\(prefix):sequence" }
    /// Poison quarantine: hash of death counts, per claimed entry (`<processing key>#<sequence>`) and, for
    /// copies returned to the lists, per SHA-1 of the element (`QueueScripts.deathTally`).
    public var deliveries: String { "\(prefix):deliveries" }
    public var processingPattern: String { "\(prefix):processing:*" }
    /// Messages of an app that could not be sent when they were claimed (isolation, docs/architecture.md): a list
    /// per provider, app and message class (`push:parked:<provider>:<topic>` for chat, `…:system`, `…:bulk`), put
    /// back on the class's input list when the app can send that class again.
    public func parked(provider: PushProvider, topic: String, messageClass: MessageClass) -> String {
        let base = "\(prefix):parked:\(provider.rawValue):\(topic)"
        switch messageClass {
        case .chat: return base
        case .system: return base + ":system"
        case .bulk: return base + ":bulk"
        }
    }

    /// The parked list of an input list's chat or bulk messages.
    public func parked(provider: PushProvider, topic: String, lane: Lane) -> String {
        parked(provider: provider, topic: topic, messageClass: lane == .bulk ? .bulk : .chat)
    }

    /// Why the parked lists of the shard's held apps wait, and until when: a hash, field = the parked list's key,
    /// value = JSON `{"provider","app","class","reason","since_ms","until_ms","seen_ms","worker"}`, written by each
    /// worker that holds the app (`Unparker`), removed when it sends the class again; for `worker status`.
    public var parkedReasons: String { "\(prefix):parked-reasons" }
    /// When each app last delivered anything, fleet-wide: a hash, field `<provider>:<topic>`, value UNIX ms, the
    /// latest any worker saw (`FleetDeliverySync`): the refusal rule's "delivered nothing for 10 minutes" is the
    /// fleet's, not one worker's.
    public var lastDeliveries: String { "\(prefix):last-delivery" }
    /// An app's rate budget shared by every worker (`FleetRateBudget`): a hash of token buckets, `share` being
    /// `<provider>:<topic>`; expires a minute after its last use.
    public func rateBudget(share: String) -> String { "\(prefix):rate:\(share)" }
    public var parkedPattern: String { "\(prefix):parked:*" }
    /// The audit copy of a parked list dropped at `millis` (`worker parked drop`): `<prefix>:dropped:<the list's name
    /// after parked:>:<millis>`, expiring after a while.
    public func droppedParked(list: String, atMillis millis: Int64) -> String {
        let head = "\(prefix):parked:"
        let rest = list.hasPrefix(head) ? String(list.dropFirst(head.count)) : list
        return "\(prefix):dropped:\(rest):\(millis)"
    }

    /// The parked list an audit copy was made of (`droppedParked`); a parked list's own name as it is.
    public func parkedName(ofDropped key: String) -> String {
        let head = "\(prefix):dropped:"
        guard key.hasPrefix(head), let colon = key.lastIndex(of: ":") else { return key }
        return "\(prefix):parked:" + key[key.index(key.startIndex, offsetBy: head.count)..<colon]
    }
    /// How far a tool's chunked push (enqueue --count, dlq import) got, so that it resumes without duplicating.
    public func pushProgress(runID: String) -> String { "\(prefix):push-progress:\(runID)" }

    /// Claimed, unacknowledged elements of one worker: hash, field = claim sequence, value = the element.
    public func processing(worker: String) -> String { "\(prefix):processing:\(worker)" }
    /// Liveness: a string with a TTL, refreshed by the worker.
    public func heartbeat(worker: String) -> String { "\(prefix):worker:\(worker)" }

    /// The worker id a processing key belongs to, or nil for a key of another shape.
    public func worker(fromProcessingKey key: String) -> String? {
        let head = "\(prefix):processing:"
        guard key.hasPrefix(head) else { return nil }
        return String(key.dropFirst(head.count))
    }
}
