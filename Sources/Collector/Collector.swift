import Logging
import PushCore
import QueueProtocol
import Synchronization

/// Claims messages from the queue into this worker's processing hash, validates them, registers them
/// with the Acknowledger, and emits them in windowed batches per kind. Idle, it sleeps in BLMOVE;
/// busy, it claims many per round trip; it pauses while the pipeline holds its maximum in flight.
public final class Collector: Sendable {
    private enum Event: Sendable {
        /// `parsed`, if given, is resumed once the elements are validated and their tokens counted in the gate.
        case claimed([ClaimedElement], parsed: CheckedContinuation<Void, Never>?)
        case deadline(WindowBatcher.Key, generation: Int)
        /// The claim connection broke: elements may have been claimed without us seeing them. The claim
        /// loop waits for `done`, so nothing it claims later can be mistaken for such an orphan.
        case reconcile(done: CheckedContinuation<Void, Never>)
        /// The pipeline is full: no message can join an open window until work completes, so waiting
        /// for the window to end would only stall. Open windows are emitted now.
        case full
        case stopped
    }

    public let settings: CollectorSettings
    /// Which of the worker's shards this collector claims from; it is the low bits of every pipeline seq.
    public let shard: Int
    /// A worker consumes at most this many shards: the shard index takes the low 6 bits of a pipeline seq.
    public static let maxShards = PipelineSeq.maxShards
    private let queue: WorkQueue
    private let gate: CapacityGate
    private let acknowledger: AsyncStream<AcknowledgerEvent>.Continuation
    private let logger: Logger
    /// The shard's ownership lease (nil: unfenced, a collector used on its own).
    private let lease: OwnershipLease?
    /// For tests: runs after a claim's reply arrived, before anything is done with it; where a pause of the
    /// process is what `ownedAfterLapse` guards against.
    private let afterClaimReply: (@Sendable () async -> Void)?
    /// Apps that cannot send now: their newly claimed messages are parked in Redis, not held (isolation).
    private let waitBoard: AppWaitBoard?
    /// `retention.parked_max` (0: no cap), and what this worker knows of the parked lists' lengths.
    private let parkedMax: Int
    private let parkedLengths: ParkedLengths
    /// The dead-letter reason of a message its full parked list could not take.
    public static let parkedListFull = "ParkedListFull"
    private let stopping = Atomic(false)
    private let events: AsyncStream<Event>
    private let eventInput: AsyncStream<Event>.Continuation
    /// How long one idle BLMOVE waits; bounds how quickly `stop()` takes effect while idle.
    public static let idleWaitSeconds = 1.0
    /// The most elements one claim round trip takes.
    public static let maxClaim = 1000

    public init(settings: CollectorSettings, queue: WorkQueue, gate: CapacityGate,
                acknowledger: AsyncStream<AcknowledgerEvent>.Continuation, logger: Logger, shard: Int = 0,
                lease: OwnershipLease? = nil, afterClaimReply: (@Sendable () async -> Void)? = nil,
                waitBoard: AppWaitBoard? = nil, parkedMax: Int = 0, parkedLengths: ParkedLengths = .shared) {
        self.settings = settings
        self.parkedMax = max(0, parkedMax)
        self.parkedLengths = parkedLengths
        self.waitBoard = waitBoard
        self.lease = lease
        self.afterClaimReply = afterClaimReply
        self.shard = max(0, min(shard, Self.maxShards - 1))
        self.queue = queue
        self.gate = gate
        self.acknowledger = acknowledger
        self.logger = logger
        (events, eventInput) = AsyncStream.makeStream(of: Event.self)
    }

    /// Stop claiming; what is buffered is emitted and `run` returns.
    public func stop() {
        stopping.store(true, ordering: .relaxed)
    }

    /// Claims and batches until stopped. The claim loop and every window's timer are child tasks of this
    /// call: none outlives it.
    public func run(output: AsyncStream<MessageBatch>.Continuation) async {
        await withDiscardingTaskGroup { group in
            group.addTask { await self.claimLoop() }
            await batchLoop(output: output, timers: &group)
            group.cancelAll()  // windows still timing have nothing left to close
        }
    }

    // MARK: claiming

    /// A claim sequence (below 2^53, from Redis) with the shard index in the low 6 bits.
    public static func pipelineSeq(_ claimSeq: UInt64, shard: Int) -> UInt64 { PipelineSeq.make(claimSequence: claimSeq, shard: shard) }

    /// The shard a pipeline seq belongs to.
    public static func shard(ofPipelineSeq seq: UInt64) -> Int { PipelineSeq.shard(of: seq) }

    /// A JSON token string is at least 19 bytes (16 hex digits, quotes, comma), so an element of B bytes
    /// holds at most B / 19 tokens: claiming at most room x 19 bytes bounds the tokens a claim brings in
    /// (to the room, plus at most one element's worth).
    static let minimumBytesPerToken = 19

    /// Once the pipeline is full, claiming resumes when this much room is free: a tenth of max_in_flight,
    /// at most one full claim.
    private var claimThreshold: Int { max(1, min(Self.maxClaim, settings.maxInFlight / 10)) }

    /// Once full of chat work, claiming resumes when a quarter of max_in_flight is free. A claim may bring in
    /// no more bytes than `minimumBytesPerToken` per token of room (the bound on tokens), so with small
    /// one-token messages (about 150 bytes) a claim at a tenth's room took about 130 of them: Redis's cost per
    /// message is mostly per call and per claim, and claims of 600 cost it a third less. The pipeline still
    /// holds three quarters of max_in_flight while it waits, far more than the wire needs.
    private var refillThreshold: Int { max(claimThreshold, settings.maxInFlight / 4) }

    /// The room bulk work never takes, so that a chat push always finds some at once: a twentieth.
    private var chatReserve: (count: Int, bytes: Int) { (max(1, settings.maxInFlight / 20), settings.maxInFlightBytes / 20) }

    /// How long the loop waits for chat work while bulk work fills its share: a chat push arriving then is
    /// claimed within this (BLMOVE wakes at once when it is pushed).
    static let chatWaitWhileBulkFullSeconds = 0.05

    private func claimLoop() async {
        var backoff = Backoff.redisReconnect(baseMillis: 100, maxMillis: 5000)
        var broken = false
        while !stopping.load(ordering: .relaxed) {
            var gateState = await gate.state(shard: shard)
            var lanes = await gate.lanes
            // Full of chat work (bulk holds none of it): wait for a good batch's worth, so claims stay large.
            // Bulk work never holds the chat reserve: a broadcast message claimed whole may take the pipeline
            // past max_in_flight, and chat still finds its reserve.
            let reserveLeft = chatRoom(room: gateState.room, byteRoom: gateState.byteRoom, lanes)
            if (gateState.room < refillThreshold && !gateState.isEmpty && lanes.bulk == 0)
                || reserveLeft.count == 0 || reserveLeft.bytes == 0 {
                eventInput.yield(.full)
                await gate.waitForRoom(atLeast: refillThreshold)
                gateState = await gate.state(shard: shard)
                lanes = await gate.lanes
            }
            if stopping.load(ordering: .relaxed) { break }
            // A suspect waits for its own shard's work only, never for the other shards' (under steady load they
            // are never all done at once): if it kills this worker, nothing else of its shard dies with it. Other
            // shards' claims do, each counting one death; it takes `max_deliveries - 1` to make one a suspect.
            let allowIsolated = gateState.shardIsEmpty
            let (freeRoom, byteRoom) = chatRoom(room: gateState.room, byteRoom: gateState.byteRoom, lanes)
            let bulk = bulkAllowance(room: gateState.room, byteRoom: gateState.byteRoom, lanes: lanes, pipelineEmpty: gateState.isEmpty)
            do {
                let validAtClaim = lease?.validUntil(shard: shard)
                let claim = try await queue.claim(maxCount: max(1, min(freeRoom, Self.maxClaim)),
                                                  maxBytes: min(byteRoom, Self.bytes(forTokens: freeRoom)),
                                                  allowIsolated: allowIsolated, bulk: bulk)
                var elements = claim.elements
                if claim.oversizedDeadLettered > 0 {
                    PushMetrics.shared.notifications(provider: .default, app: nil, outcome: "dead_letter", reason: "InvalidMessage",
                                                     count: claim.oversizedDeadLettered)
                    logger.warning("dead letter: elements over collector.max_element_bytes, dead-lettered inside Redis (their first KB kept)",
                                   metadata: ["count": "\(claim.oversizedDeadLettered)", "limit": "\(settings.maxElementBytes)",
                                              "queue": "\(queue.keys.queue)"])
                }
                if !elements.isEmpty {
                    await afterClaimReply?()
                    PushMetrics.shared.messagesClaimed.increment(by: elements.count)
                    // Normally the reply comes within milliseconds and the lease holds for most of a TTL more.
                    if let lease, let validAtClaim, OwnershipLease.now() >= validAtClaim {
                        guard let owned = await ownedAfterLapse(elements, lease: lease) else { break }
                        elements = owned
                    }
                }
                if !elements.isEmpty {
                    for lane in Lane.allCases {
                        let part = elements.filter { Lane.of(claimSequence: $0.seq) == lane }
                        if !part.isEmpty { await gate.add(part.count, bytes: part.reduce(0) { $0 + $1.raw.count }, lane: lane, shard: shard) }
                    }
                    // The next claim waits until these are parsed and their tokens counted, so the room it
                    // sees is true: claims cannot outrun validation and overshoot max_in_flight.
                    let input = eventInput
                    let claimed = elements
                    await withCheckedContinuation { input.yield(.claimed(claimed, parsed: $0)) }
                }
                if broken {
                    // After the fresh claims above, so that they are registered before the comparison; the
                    // loop waits for the reconcile, so nothing claimed later can be mistaken for an orphan.
                    broken = false
                    backoff.reset()
                    logger.info("Redis is back; claiming again")
                    let input = eventInput
                    await withCheckedContinuation { input.yield(.reconcile(done: $0)) }
                }
                if claim.isolated || claim.blockedByIsolation {
                    // A message whose earlier holders died is handled alone in its shard: if it kills this worker
                    // too, nothing else of the shard is held with it (and the others it was claimed with get
                    // delivered). Other shards keep claiming meanwhile.
                    if claim.blockedByIsolation { eventInput.yield(.full) }
                    await gate.waitUntilEmpty(shard: shard)
                } else if claim.elements.isEmpty, !stopping.load(ordering: .relaxed) {
                    // Bulk work fills its part: watch the chat list closely (its room is kept free); otherwise
                    // idle, woken by the first chat push (bulk pushes are seen at the next claim, within a second).
                    let bulkFull = lanes.bulk > 0 && bulk.whileChatIdle.count == 0
                    _ = try await queue.waitForWork(timeoutSeconds: bulkFull ? Self.chatWaitWhileBulkFullSeconds : Self.idleWaitSeconds)
                }
            } catch {
                if stopping.load(ordering: .relaxed) { break }  // stopping: no retry, and no wait for one
                if !broken { logger.error("claim failed; retrying with backoff", metadata: ["error": "\(error)"]) }
                broken = true
                try? await Task.sleep(for: .milliseconds(backoff.next()))
            }
        }
        eventInput.yield(.stopped)
    }

    /// A claim whose reply is handled after the shard's lease lapsed (the process paused, or Redis was slow, in
    /// between) may have been returned to the queue by a peer's recovery before this worker saw it; and the
    /// ownership confirmation that ends the lapse (`Heartbeat`) checks only the claims the Acknowledger knows,
    /// which these are not yet. So they are checked here, once the lease holds again (the liveness key is then
    /// alive, and no recovery can take them any more): those still in the processing hash are handed on, the
    /// rest belong to whoever claimed them since and are dropped unsent. Nil while stopping: nothing is handed
    /// on, and what is still claimed stays for recovery.
    private func ownedAfterLapse(_ elements: [ClaimedElement], lease: OwnershipLease) async -> [ClaimedElement]? {
        var backoff = Backoff.redisReconnect(baseMillis: 50, maxMillis: 2000)
        while true {
            // The heartbeat renews the lease (its confirmation) without waiting for this loop.
            while lease.lapsed(shard: shard) {
                if stopping.load(ordering: .relaxed) { return nil }
                try? await Task.sleep(for: .milliseconds(20))
            }
            do {
                let held = Set(try await queue.claimedSequences())
                let owned = elements.filter { held.contains($0.seq) }
                if owned.count < elements.count {
                    let lost = elements.filter { !held.contains($0.seq) }
                    PushMetrics.shared.claimsLost.increment(by: lost.count)
                    logger.warning("dropped claims another worker took over while this one was paused or cut off from Redis (the claim's reply came after its ownership lease lapsed); they are not sent here",
                                   metadata: ["queue": "\(queue.keys.queue)", "messages": "\(lost.count)", "seq": "\(lost.prefix(20).map(\.seq))"])
                }
                return owned
            } catch {
                if stopping.load(ordering: .relaxed) { return nil }
                logger.error("cannot read this worker's processing hash to check a claim made across a lapsed lease; retrying",
                             metadata: ["error": "\(error)"])
                try? await Task.sleep(for: .milliseconds(backoff.next()))
            }
        }
    }

    /// The room chat work may claim: the pipeline's room, or what is left of the chat reserve if bulk work
    /// (one broadcast message claimed whole may overshoot) has taken more.
    private func chatRoom(room: Int, byteRoom: Int, _ lanes: (chat: Int, bulk: Int, bulkBytes: Int)) -> (count: Int, bytes: Int) {
        guard lanes.bulk > 0 else { return (room, byteRoom) }
        let chatBytes = max(0, settings.maxInFlightBytes - byteRoom - lanes.bulkBytes)
        return (max(room, chatReserve.count - lanes.chat), max(byteRoom, chatReserve.bytes - chatBytes))
    }

    /// What the bulk list may give in the next claim (docs/operations.md): never the chat reserve; while chat
    /// has work (in the list, or in flight here), at most `collector.bulk_share` of the room in all; and, as
    /// for chat, a good batch's worth or nothing while the pipeline is busy.
    func bulkAllowance(room: Int, byteRoom: Int, lanes: (chat: Int, bulk: Int, bulkBytes: Int), pipelineEmpty: Bool) -> BulkAllowance {
        let reserve = chatReserve
        var idle = max(0, room - reserve.count)
        var idleBytes = max(0, min(byteRoom - reserve.bytes, Self.bytes(forTokens: idle)))
        let shareCount = Int(Double(settings.maxInFlight) * settings.bulkShare)
        let shareBytes = Int(Double(settings.maxInFlightBytes) * settings.bulkShare)
        var busy = min(idle, max(0, shareCount - lanes.bulk))
        var busyBytes = max(0, min(idleBytes, shareBytes - lanes.bulkBytes, Self.bytes(forTokens: busy)))
        if !pipelineEmpty && busy < claimThreshold { (busy, busyBytes) = (0, 0) }
        if !pipelineEmpty && idle < claimThreshold { (idle, idleBytes) = (0, 0) }
        // Chat work in flight is chat work: bulk keeps to its share until it is done.
        if lanes.chat > 0 { (idle, idleBytes) = (busy, busyBytes) }
        return BulkAllowance(whileChatBusy: (min(busy, Self.maxClaim), busyBytes), whileChatIdle: (min(idle, Self.maxClaim), idleBytes))
    }

    /// The most bytes of elements that can hold no more than `tokens` tokens (see `minimumBytesPerToken`).
    static func bytes(forTokens tokens: Int) -> Int {
        let (bytes, overflow) = tokens.multipliedReportingOverflow(by: minimumBytesPerToken)
        return overflow ? Int.max : bytes
    }

    // MARK: validating and batching

    private func batchLoop(output: AsyncStream<MessageBatch>.Continuation, timers: inout DiscardingTaskGroup) async {
        var batcher = WindowBatcher(bounds: settings.batch)
        var limits = MessageLimits()
        limits.maxElementBytes = settings.maxElementBytes
        let parser = MessageParser(limits: limits)
        var topics = StringInterner()
        let window = Duration.milliseconds(settings.windowMillis)
        for await event in events {
            switch event {
            case .claimed(let items, let parsed):
                var registrations: [ClaimRegistration] = []
                registrations.reserveCapacity(items.count)
                var extra = (chat: 0, bulk: 0)
                var ready: [MessageBatch] = []
                let now = WallClock.nowSeconds()
                let claimedAt = ContinuousClock.now
                for item in items {
                    let raw = item.raw
                    let seq = Self.pipelineSeq(item.seq, shard: shard)
                    switch parser.parse(raw, seq: seq, now: now) {
                    case .invalid(let reason, let messageID):
                        let (deadLetter, provider) = DeadLetterEntry(
                            failedTokens: nil, reason: reason, status: nil, attempts: 0,
                            failedAtMillis: WallClock.nowMillis(), worker: queue.workerID).recordAndProvider(element: raw)
                        PushMetrics.shared.notifications(provider: provider, app: nil, outcome: "dead_letter", reason: "InvalidMessage", count: 1)
                        // The id is named when the element had a valid one; otherwise the claim sequence
                        // and size tell which element it was (the dead letter holds it whole).
                        logger.warning("dead letter: invalid message", metadata: [
                            "message_id": "\(messageID ?? "(none)")", "reason": "\(Printable.clipped(reason, to: 200))",
                            "bytes": "\(raw.count)", "seq": "\(item.seq)",
                        ])
                        registrations.append(ClaimRegistration(
                            element: item, seq: seq, messageID: messageID ?? "", appTopic: "", pendingTokens: 0, notifications: 1,
                            records: [.deadLetter(deadLetter)]))
                    case .valid(var message, let rejected):
                        // Every message of a topic shares one copy of its strings while in flight.
                        let topic = topics.intern(message.headers.topic)
                        // Without a push-type suffix (nearly every message) the app's topic is the same text: one
                        // lookup, not two.
                        message.headers.appTopic = StringInterner.sameBytes(message.headers.appTopic, topic)
                            ? topic : topics.intern(message.headers.appTopic)
                        message.headers.topic = topic
                        let app = AppWaitBoard.App(provider: message.headers.provider, topic: message.headers.appTopic)
                        let messageClass = MessageClass(lane: Lane.of(pipelineSeq: seq), kind: message.kind)
                        if let waitBoard, waitBoard.isWaiting(app, messageClass: messageClass) {
                            let list = queue.keys.parked(provider: app.provider, topic: app.topic, messageClass: messageClass)
                            if parkedMax > 0 && parkedLengths.length(list) >= parkedMax {
                                // The parked list is full (`retention.parked_max`): a replayable dead letter instead,
                                // so that Redis does not hold an app's backlog without bound while it cannot send.
                                let (deadLetter, provider) = DeadLetterEntry(
                                    failedTokens: nil, reason: Self.parkedListFull, status: nil, attempts: 0,
                                    failedAtMillis: WallClock.nowMillis(), worker: queue.workerID,
                                    detail: "\(list) holds \(parkedMax) messages or more (retention.parked_max)").recordAndProvider(element: raw)
                                PushMetrics.shared.notifications(provider: provider, app: message.headers.appTopic, outcome: "dead_letter",
                                                                 reason: Self.parkedListFull, count: max(1, message.tokens.count))
                                registrations.append(ClaimRegistration(
                                    element: item, seq: seq, messageID: message.id, appTopic: message.headers.appTopic,
                                    provider: message.headers.provider, pendingTokens: 0, notifications: 1,
                                    records: [.deadLetter(deadLetter)]))
                                continue
                            }
                            parkedLengths.noteParked(list)
                            // Its app cannot send its class now: the element moves, as written, to the parked list
                            // of its app and class when this registration is acknowledged, and comes back to the
                            // queue when the app can send that class (the Unparker). Nothing of it is sent or
                            // recorded here, not even feedback for malformed tokens, which its later claim records once.
                            registrations.append(ClaimRegistration(
                                element: item, seq: seq, messageID: message.id, appTopic: message.headers.appTopic,
                                provider: message.headers.provider, pendingTokens: 0, notifications: 1,
                                records: [.parked(list: list)]))
                            PushMetrics.shared.messagesParked(provider: app.provider, app: app.topic, count: 1)
                            continue
                        }
                        if !rejected.isEmpty {
                            PushMetrics.shared.notifications(provider: message.headers.provider, app: message.headers.appTopic,
                                                             outcome: "feedback", reason: "BadDeviceToken", count: rejected.count)
                        }
                        let notifications = max(1, message.tokens.count)
                        if Lane.of(pipelineSeq: seq) == .bulk { extra.bulk += notifications - 1 } else { extra.chat += notifications - 1 }
                        let stamp = rejected.isEmpty ? 0 : WallClock.nowMillis()
                        registrations.append(ClaimRegistration(
                            element: item, seq: seq, messageID: message.id, appTopic: message.headers.appTopic,
                            provider: message.headers.provider,
                            pendingTokens: message.tokens.count, notifications: notifications,
                            records: rejected.map { token in
                                .feedback(OutcomeRecords.feedback(token: token, topic: message.headers.appTopic,
                                                                  reason: "BadDeviceToken", timestampMillis: stamp,
                                                                  messageID: message.id, provider: message.headers.provider))
                            }))
                        if let full = batcher.add(message) { ready.append(full) }
                    }
                }
                // A timer only for a window this claim left open, counted from the claim.
                for (key, generation) in batcher.openedWindows() {
                    let input = eventInput
                    timers.addTask {
                        guard (try? await Task.sleep(until: claimedAt + window, clock: .continuous)) != nil else { return }
                        input.yield(.deadline(key, generation: generation))
                    }
                }
                if extra.chat > 0 { await gate.add(extra.chat, lane: .chat, shard: shard) }
                if extra.bulk > 0 { await gate.add(extra.bulk, lane: .bulk, shard: shard) }
                // Registration goes first, so no result can reach the Acknowledger before its message.
                acknowledger.yield(.claimed(registrations))
                for batch in ready { output.yield(batch) }
                parsed?.resume()
            case .deadline(let key, let generation):
                if let batch = batcher.deadline(key: key, generation: generation) { output.yield(batch) }
            case .reconcile(let done):
                let orphans = await acknowledger.findOrphans()
                if !orphans.isEmpty {
                    logger.warning("re-taking claimed elements whose claim reply was lost", metadata: ["count": "\(orphans.count)"])
                    for lane in Lane.allCases {
                        let part = orphans.filter { Lane.of(claimSequence: $0.seq) == lane }
                        if !part.isEmpty { await gate.add(part.count, bytes: part.reduce(0) { $0 + $1.raw.count }, lane: lane, shard: shard) }
                    }
                    eventInput.yield(.claimed(orphans, parsed: nil))
                }
                done.resume()
            case .full:
                for batch in batcher.drain() { output.yield(batch) }
            case .stopped:
                for batch in batcher.drain() { output.yield(batch) }
                output.finish()
                eventInput.finish()
            }
        }
    }
}
