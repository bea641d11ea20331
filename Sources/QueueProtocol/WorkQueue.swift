import PushCore
import RedisClient

/// One outcome record for the acknowledgement script.
public enum OutcomeRecord: Sendable, Equatable {
    case deadLetter([UInt8])
    case feedback([UInt8])
    case filtered([UInt8])
    /// The element itself moves, as written, to this parked list (its app cannot send now: isolation); it is
    /// not an outcome of the message, which goes back to the queue when the app can send again.
    case parked(list: String)

    /// The record as the acknowledge script reads it; a parked one names its list by its index among the keys.
    func tagged(parkedKeyIndex: (String) -> Int) -> [UInt8] {
        switch self {
        case .deadLetter(let body): return [UInt8(ascii: "D")] + body
        case .feedback(let body): return [UInt8(ascii: "F")] + body
        case .filtered(let body): return [UInt8(ascii: "A")] + body
        case .parked(let list): return Array("P\(parkedKeyIndex(list))".utf8)
        }
    }
}

/// An element this worker claimed: its claim sequence (the processing hash's field) and its bytes.
public struct ClaimedElement: Sendable, Equatable {
    public var seq: UInt64
    public var raw: [UInt8]
    /// Earlier holders of it died: acknowledging it also clears its death count.
    public var counted: Bool

    public init(seq: UInt64, raw: [UInt8], counted: Bool = false) {
        self.seq = seq
        self.raw = raw
        self.counted = counted
    }
}

/// How much the bulk list may give in one claim (docs/operations.md): a count of elements and bytes while the chat
/// list has work, and when it has none (the claim script tells which, atomically).
public struct BulkAllowance: Sendable, Equatable {
    public var whileChatBusy: (count: Int, bytes: Int)
    public var whileChatIdle: (count: Int, bytes: Int)

    public init(whileChatBusy: (count: Int, bytes: Int), whileChatIdle: (count: Int, bytes: Int)) {
        self.whileChatBusy = whileChatBusy
        self.whileChatIdle = whileChatIdle
    }

    public static let none = BulkAllowance(whileChatBusy: (0, 0), whileChatIdle: (0, 0))

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.whileChatBusy == rhs.whileChatBusy && lhs.whileChatIdle == rhs.whileChatIdle
    }
}

/// What one claim call brought.
public struct Claim: Sendable {
    public var elements: [ClaimedElement]
    /// The one element claimed must be handled alone: its holders died `maxDeliveries - 1` times already.
    public var isolated: Bool
    /// The next element must be claimed alone, with nothing else in flight, and could not be now.
    public var blockedByIsolation: Bool
    /// Elements over `collector.max_element_bytes` the claim dead-lettered inside Redis (never handed over).
    public var oversizedDeadLettered = 0
}

/// A dead letter whose record is made when the message is acknowledged, from its element as the processing
/// hash holds it: the pipeline does not keep every claimed element in memory (about 200 bytes each, up to
/// `max_in_flight` of them) for the few that fail.
public typealias DeadLetterDraft = DeadLetterEntry

/// A message whose every token has reached an outcome: to be acknowledged with its records.
public struct CompletedMessage: Sendable {
    public var seq: UInt64
    public var counted: Bool
    public var records: [OutcomeRecord]
    /// Dead letters still to be made from the element (see `DeadLetterDraft`); `acknowledge` makes them.
    public var deadLetters: [DeadLetterDraft]
    public var notifications: Int
    public var bytes: Int
    /// The message's number in the pipeline (shard in its low bits), when it differs from `seq`.
    public var pipelineSeq: UInt64
    /// Recovery gave the claim to another worker (ownership fencing): not acknowledged, only released.
    public var lost: Bool

    public init(seq: UInt64, counted: Bool = false, records: [OutcomeRecord], deadLetters: [DeadLetterDraft] = [],
                notifications: Int, bytes: Int = 0, pipelineSeq: UInt64? = nil, lost: Bool = false) {
        self.seq = seq
        self.counted = counted
        self.records = records
        self.deadLetters = deadLetters
        self.notifications = notifications
        self.bytes = bytes
        self.pipelineSeq = pipelineSeq ?? seq
        self.lost = lost
    }
}

/// What returning a worker's claims did.
public struct Recovery: Sendable, Equatable {
    /// The worker's heartbeat is live: nothing was touched.
    public var alive = false
    public var returned = 0
    public var poisoned = 0
    /// Ids of the messages dead-lettered as PoisonMessage (those that had an id).
    public var poisonedIDs: [String] = []
}

/// The queue protocol of docs/queue-protocol.md on one Redis connection: claim, acknowledge, liveness, recovery.
/// Every operation is one round trip (recovery: one per chunk), and costs Redis O(1) per message.
public struct WorkQueue: Sendable {
    public let connection: any RedisCommands
    public let keys: RedisKeys
    public let workerID: String
    /// `recovery.max_deliveries`: a message whose holders died this many times is dead-lettered as PoisonMessage.
    public let maxDeliveries: Int
    private let scripts: ScriptRunner
    /// One above the highest claim sequence this queue has been given (shared by copies): the claim script
    /// never hands out less, so sequences stay unique for this worker even when Redis loses recent writes.
    private let nextSequence = Locked<UInt64>(0)

    /// Elements a recovery call moves at most, so a dead worker's 100,000 claims never sit in Lua memory at once.
    public static let recoveryChunk = 1000

    /// Elements larger than this are dead-lettered by the claim inside Redis (`collector.max_element_bytes`).
    public let maxElementBytes: Int
    /// How many entries the dead-letter and feedback lists keep when this worker writes to them (0: all).
    public let retention: (deadLetters: Int, feedback: Int)

    public init(connection: any RedisCommands, keys: RedisKeys, workerID: String, maxDeliveries: Int = 3,
                maxElementBytes: Int = 1_048_576, retention: (deadLetters: Int, feedback: Int) = (0, 0)) {
        self.maxElementBytes = max(1, maxElementBytes)
        self.retention = (max(0, retention.deadLetters), max(0, retention.feedback))
        self.connection = connection
        self.keys = keys
        self.workerID = workerID
        self.maxDeliveries = max(1, min(maxDeliveries, 1000))
        self.scripts = ScriptRunner(connection: connection)
    }

    private var processing: String { keys.processing(worker: workerID) }

    /// Atomically moves up to `maxCount` of the oldest elements, at most `maxBytes` in all (at least one),
    /// from the queue into this worker's processing hash. An element whose holders died
    /// `maxDeliveries - 1` times comes alone (`Claim.isolated`), and only when `allowIsolated`.
    /// `bulk`: what the bulk list may give in the same call, while the chat list has work and when it has
    /// none (`BulkAllowance`); none by default. Chat elements come first; bulk ones have sequences from
    /// `Lane.bulkSequenceBase` up.
    public func claim(maxCount: Int, maxBytes: Int, allowIsolated: Bool, bulk: BulkAllowance = .none) async throws -> Claim {
        let isolateFrom = max(1, maxDeliveries - 1)
        let reply = try await scripts.run(QueueScripts.claim,
                                          keys: [keys.queue, processing, keys.sequence, keys.deliveries, keys.bulkQueue,
                                                 keys.deadLetters],
                                          arguments: [String(max(1, maxCount)), String(max(1, maxBytes)),
                                                      allowIsolated ? "1" : "0", String(isolateFrom),
                                                      String(nextSequence.withLock { $0 }),
                                                      String(max(0, bulk.whileChatBusy.count)), String(max(0, bulk.whileChatBusy.bytes)),
                                                      String(max(0, bulk.whileChatIdle.count)), String(max(0, bulk.whileChatIdle.bytes)),
                                                      String(maxElementBytes), workerID,
                                                     ].map { Array($0.utf8) })
        let (claim, first) = try Self.claim(from: reply)
        if !claim.elements.isEmpty {
            noteSequencesGiven(first + UInt64(claim.elements.count) - 1)
        }
        return claim
    }

    /// Reads the claim script's reply; also the first sequence it gave.
    static func claim(from reply: RedisReply) throws -> (claim: Claim, first: UInt64) {
        guard let parts = reply.array, parts.count == 7, let first = parts[0].integer, let items = parts[1].array,
              let isolated = parts[3].integer, let blocked = parts[4].integer, let chat = parts[5].integer, first >= 0
        else { throw RedisError.unexpectedReply("claim: \(reply.shape)") }
        let counted = Set((parts[2].array ?? []).compactMap(\.integer))
        var elements: [ClaimedElement] = []
        elements.reserveCapacity(items.count)
        for (offset, item) in items.enumerated() {
            guard let raw = item.bytes else { throw RedisError.unexpectedReply("claim: element \(offset)") }
            let seq = UInt64(first) + UInt64(offset) + (offset < chat ? 0 : Lane.bulkSequenceBase)
            elements.append(ClaimedElement(seq: seq, raw: raw, counted: counted.contains(Int64(offset))))
        }
        return (Claim(elements: elements, isolated: isolated == 1, blockedByIsolation: blocked == 1,
                      oversizedDeadLettered: Int(parts[6].integer ?? 0)), UInt64(first))
    }

    /// Raises the floor of the claim counter above `counter` (a sequence without its lane's base).
    private func noteSequencesGiven(_ counter: UInt64) {
        nextSequence.withLock { $0 = max($0, counter &+ 1) }
    }

    /// Waits up to `timeoutSeconds` for the queue to hold something, without taking it (a BLMOVE of the queue
    /// onto itself, whose element a plain connection never reads: `RedisConnection.waitForListElement`). How an
    /// idle worker sleeps without polling.
    public func waitForWork(timeoutSeconds: Double) async throws -> Bool {
        try await connection.waitForListElement(keys.queue, timeoutSeconds: timeoutSeconds)
    }

    public func waitForReplicas(_ replicas: Int, timeoutMillis: Int) async throws -> Int {
        let reply = try await connection.execute(["WAIT", String(max(0, replicas)), String(max(1, timeoutMillis))])
        guard let reached = reply.integer else { throw RedisError.unexpectedReply("WAIT: \(reply.shape)") }
        return Int(reached)
    }

    /// Acknowledges messages, each atomically with its records (a message and its records go together; two
    /// messages need not); returns how many were still claimed.
    @discardableResult
    public func acknowledge(_ messages: [CompletedMessage], filteredCap: Int) async throws -> Int {
        let messages = try await draftsMade(messages)
        // Delivered messages with no records and no death count (nearly all of them) need no script: a plain
        // HDEL is atomic and idempotent, and Redis parses its arguments once instead of copying each into Lua
        // and back (0.42 against 0.72 µs of Redis CPU per message, docs/queue-protocol.md "Cost"). A field
        // already gone (recovered elsewhere, or a retry whose first reply was lost) is not counted.
        // Plain ones need only their field names: no copies of the messages themselves.
        var plain: [[UInt8]] = []
        plain.reserveCapacity(messages.count)
        var others: [CompletedMessage] = []
        for message in messages {
            if message.records.isEmpty && !message.counted {
                plain.append(Array(String(message.seq).utf8))
            } else {
                others.append(message)
            }
        }
        var acknowledged = 0
        if !plain.isEmpty {
            let commands = stride(from: 0, to: plain.count, by: Self.fieldsPerCommand).map { start in
                [Array("HDEL".utf8), Array(processing.utf8)] + plain[start..<min(plain.count, start + Self.fieldsPerCommand)]
            }
            for reply in try await connection.pipeline(commands) {
                if case .error(let text) = reply { throw RedisError.server(text) }
                acknowledged += Int(reply.integer ?? 0)
            }
        }
        guard !others.isEmpty else { return acknowledged }
        var arguments: [[UInt8]] = [Array(String(filteredCap).utf8), Array(String(retention.deadLetters).utf8),
                                    Array(String(retention.feedback).utf8)]
        arguments.reserveCapacity(1 + others.count * 4)
        var scriptKeys = [processing, keys.deadLetters, keys.feedback, keys.filtered, keys.deliveries]
        // Parked lists are keys of the script too (one slot with the shard's other keys), after the fixed five.
        let parkedIndex = { (list: String) -> Int in
            if let index = scriptKeys.firstIndex(of: list) { return index + 1 }
            scriptKeys.append(list)
            return scriptKeys.count
        }
        for message in others {
            arguments.append(Array(String(message.seq).utf8))
            arguments.append(message.counted ? [UInt8(ascii: "1")] : [UInt8(ascii: "0")])
            arguments.append(Array(String(message.records.count).utf8))
            for record in message.records { arguments.append(record.tagged(parkedKeyIndex: parkedIndex)) }
        }
        let reply = try await scripts.run(QueueScripts.acknowledge, keys: scriptKeys, arguments: arguments)
        return acknowledged + Int(reply.integer ?? 0)
    }

    /// Fields per HDEL of plain acknowledgements and per HMGET of drafted dead letters; the chunks of one
    /// acknowledgement go in one pipeline.
    static let fieldsPerCommand = 1000

    /// Makes the messages' drafted dead letters from their elements, read back with HMGET. An element no longer
    /// there was recovered by another worker, or acknowledged by an earlier attempt whose reply was lost: its
    /// message gets no dead letter here, and the acknowledgement below finds it gone and writes nothing for it.
    private func draftsMade(_ messages: [CompletedMessage]) async throws -> [CompletedMessage] {
        let drafted = messages.indices.filter { !messages[$0].deadLetters.isEmpty }
        guard !drafted.isEmpty else { return messages }
        let commands = stride(from: 0, to: drafted.count, by: Self.fieldsPerCommand).map { start in
            [Array("HMGET".utf8), Array(processing.utf8)]
                + drafted[start..<min(drafted.count, start + Self.fieldsPerCommand)].map { Array(String(messages[$0].seq).utf8) }
        }
        var elements: [RedisReply] = []
        for reply in try await connection.pipeline(commands) {
            if case .error(let text) = reply { throw RedisError.server(text) }
            elements += reply.array ?? []
        }
        guard elements.count == drafted.count else { throw RedisError.unexpectedReply("HMGET of drafted dead letters") }
        var made = messages
        for (index, element) in zip(drafted, elements) {
            if let raw = element.bytes { made[index].records += made[index].deadLetters.map { .deadLetter($0.record(element: raw)) } }
            made[index].deadLetters = []
        }
        return made
    }

    /// The claim sequences this worker holds (reconciliation after a lost claim reply).
    public func claimedSequences() async throws -> [UInt64] {
        let reply = try await connection.execute(["HKEYS", processing])
        return (reply.array ?? []).compactMap { $0.string.flatMap(UInt64.init) }
    }

    /// The claimed elements with these sequences (those still claimed), each `counted` as a claim would
    /// report it, so that acknowledging it clears its death count.
    public func claimedElements(_ seqs: [UInt64]) async throws -> [ClaimedElement] {
        var elements: [ClaimedElement] = []
        for start in stride(from: 0, to: seqs.count, by: 1000) {
            let chunk = Array(seqs[start..<min(seqs.count, start + 1000)])
            let reply = try await scripts.run(QueueScripts.claimed, keys: [processing, keys.deliveries],
                                              arguments: chunk.map { Array(String($0).utf8) })
            elements += try Self.claimed(from: reply, seqs: chunk)
        }
        if let last = elements.map({ $0.seq >= Lane.bulkSequenceBase ? $0.seq - Lane.bulkSequenceBase : $0.seq }).max() {
            noteSequencesGiven(last)
        }
        return elements
    }

    /// Reads the `claimed` script's reply for these sequences: the elements still claimed.
    static func claimed(from reply: RedisReply, seqs: [UInt64]) throws -> [ClaimedElement] {
        guard let rows = reply.array, rows.count == seqs.count else { throw RedisError.unexpectedReply("claimed: \(reply.shape)") }
        var elements: [ClaimedElement] = []
        for (seq, row) in zip(seqs, rows) {
            guard let pair = row.array, pair.count == 2, let raw = pair[0].bytes else { continue }
            elements.append(ClaimedElement(seq: seq, raw: raw, counted: pair[1].integer == 1))
        }
        return elements
    }

    /// Returns this worker's claims to the queue at a graceful stop: not a death, nothing is counted.
    @discardableResult
    public func returnOwnClaims() async throws -> Int {
        try await recover(worker: workerID, onlyIfDead: false, countDeath: false).returned
    }

    /// Returns a worker's claims to the queue, oldest consumed first, in chunks. `onlyIfDead`: leave a
    /// worker whose heartbeat is live alone. `countDeath`: the holder died, which counts toward
    /// `maxDeliveries` (PoisonMessage). The hash's fields are read once (HKEYS) and sorted here, so the
    /// script calls cost Redis O(what they move): linear in the claims however many there are. Fields that
    /// appear meanwhile are found by another pass.
    public func recover(worker: String, onlyIfDead: Bool, countDeath: Bool) async throws -> Recovery {
        var total = Recovery()
        let processing = keys.processing(worker: worker)
        while true {
            var fields: [String] = []
            do {
                fields = (try await connection.execute(["HKEYS", processing]).array ?? []).compactMap(\.string)
            } catch RedisError.server(let text) where text.hasPrefix("WRONGTYPE") {
                // A processing list of an earlier version: the script moves it a chunk per call.
            }
            // Newest first, so that after every chunk's RPUSH the oldest claim is at the consuming end.
            fields.sort { (UInt64($0) ?? 0) > (UInt64($1) ?? 0) }
            var start = 0
            repeat {
                let chunk = fields[start..<min(fields.count, start + Self.recoveryChunk)]
                start += chunk.count
                // A poison message's dead letter, in the name of the holder that died; the script puts the
                // element's `raw` members between the two parts.
                let poison = DeadLetterEntry(failedTokens: nil, reason: "PoisonMessage", status: nil, attempts: 0,
                                             failedAtMillis: WallClock.nowMillis(), worker: worker,
                                             deliveries: maxDeliveries).framingAroundRaw()
                let reply = try await scripts.run(
                    QueueScripts.recover,
                    keys: [processing, keys.queue, keys.heartbeat(worker: worker), keys.deliveries, keys.deadLetters, keys.workers,
                           keys.bulkQueue],
                    arguments: [onlyIfDead ? "1" : "0", countDeath ? "1" : "0", String(maxDeliveries),
                                String(Self.recoveryChunk), worker].map { Array($0.utf8) }
                        + [poison.before, poison.after] + chunk.map { Array($0.utf8) })
                guard let parts = reply.array, parts.count == 4, let returned = parts[0].integer, let poisoned = parts[1].integer,
                      let remaining = parts[2].integer
                else { throw RedisError.unexpectedReply("recover: \(reply.shape)") }
                if returned < 0 {
                    total.alive = true
                    return total
                }
                total.returned += Int(returned)
                total.poisoned += Int(poisoned)
                total.poisonedIDs += (parts[3].array ?? []).compactMap(\.string)
                if remaining == 0 { return total }
            } while start < fields.count
        }
    }

    // MARK: parked messages (isolation)

    /// Puts up to `maxCount` of an app's parked messages back at the consumer end of their input list (oldest
    /// first, claimed next); returns how many moved.
    public func unpark(provider: PushProvider, topic: String, messageClass: MessageClass, maxCount: Int = 1000) async throws -> Int {
        let reply = try await scripts.run(QueueScripts.unpark,
                                          keys: [keys.parked(provider: provider, topic: topic, messageClass: messageClass),
                                                 keys.queue(messageClass.lane)],
                                          arguments: [Array(String(max(1, min(maxCount, 5000))).utf8)])
        return Int(reply.integer ?? 0)
    }

    /// How many messages of an app are parked, in all its classes.
    public func parkedCount(provider: PushProvider, topic: String) async throws -> Int {
        let replies = try await connection.pipeline(MessageClass.allCases.map { messageClass in
            ["LLEN", keys.parked(provider: provider, topic: topic, messageClass: messageClass)].map { Array($0.utf8) }
        })
        var total = 0
        for reply in replies {
            if case .error(let text) = reply { throw RedisError.server(text) }
            total += Int(reply.integer ?? 0)
        }
        return total
    }

    // MARK: liveness and the registry

    /// Refreshes the liveness key and the registry entry in one round trip.
    public func beat(ttlMillis: Int, info: String) async throws {
        let replies = try await connection.pipeline([
            ["SET", keys.heartbeat(worker: workerID), info, "PX", String(ttlMillis)].map { Array($0.utf8) },
            ["ZADD", keys.workers, String(WallClock.nowMillis()), workerID].map { Array($0.utf8) },
        ])
        for case .error(let text) in replies { throw RedisError.server(text) }
    }

    public func isAlive(_ worker: String) async throws -> Bool {
        try await connection.execute(["EXISTS", keys.heartbeat(worker: worker)]).integer == 1
    }

    /// Removes the liveness key and the registry entry (a graceful stop, after returning the claims).
    public func clearHeartbeat() async throws {
        _ = try await connection.pipeline([
            ["DEL", keys.heartbeat(worker: workerID)].map { Array($0.utf8) },
            ["ZREM", keys.workers, workerID].map { Array($0.utf8) },
        ])
    }

    /// Registered workers whose last heartbeat is older than `olderThanMillis`: candidates for recovery.
    /// One sorted-set range query, whatever else the keyspace holds.
    public func silentWorkers(olderThanMillis: Int, limit: Int = 100) async throws -> [String] {
        let cutoff = WallClock.nowMillis() - Int64(olderThanMillis)
        let reply = try await connection.execute(["ZRANGEBYSCORE", keys.workers, "-inf", "(\(cutoff)", "LIMIT", "0", String(limit)])
        return (reply.array ?? []).compactMap(\.string)
    }

    /// Processing keys left in the list form of earlier versions (migration at startup): one SCAN of the
    /// keyspace for keys of type list, done once per start, never on the liveness path.
    public func legacyProcessingOwners() async throws -> [String] {
        var cursor = "0"
        var workers: [String] = []
        repeat {
            let reply = try await connection.execute(["SCAN", cursor, "MATCH", keys.processingPattern, "COUNT", "1000", "TYPE", "list"])
            guard let parts = reply.array, parts.count == 2, let next = parts[0].string, let found = parts[1].array else {
                throw RedisError.unexpectedReply("SCAN: \(reply.shape)")
            }
            cursor = next
            workers += found.compactMap { $0.string.flatMap(keys.worker(fromProcessingKey:)) }
        } while cursor != "0"
        return workers
    }
}
