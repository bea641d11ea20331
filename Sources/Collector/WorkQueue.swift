import PushCore

/// One outcome record for the acknowledgement script.
public enum OutcomeRecord: Sendable, Equatable {
    case deadLetter([UInt8])
    case feedback([UInt8])
    case filtered([UInt8])

    var tagged: [UInt8] {
        switch self {
        case .deadLetter(let body): return [UInt8(ascii: "D")] + body
        case .feedback(let body): return [UInt8(ascii: "F")] + body
        case .filtered(let body): return [UInt8(ascii: "A")] + body
        }
    }
}

/// A message whose every token has reached an outcome: to be acknowledged with its records.
public struct CompletedMessage: Sendable {
    public var raw: [UInt8]
    public var records: [OutcomeRecord]
    public var notifications: Int

    public init(raw: [UInt8], records: [OutcomeRecord], notifications: Int) {
        self.raw = raw
        self.records = records
        self.notifications = notifications
    }
}

/// The queue operations of SPEC section 3, on one Redis connection.
public struct WorkQueue: Sendable {
    public let connection: RedisConnection
    public let keys: RedisKeys
    public let workerID: String

    public init(connection: RedisConnection, keys: RedisKeys, workerID: String) {
        self.connection = connection
        self.keys = keys
        self.workerID = workerID
    }

    private var processing: String { keys.processing(worker: workerID) }

    /// Atomically moves up to `count` elements from the queue to this worker's processing list; oldest first.
    public func claim(upTo count: Int) async throws -> [[UInt8]] {
        let reply = try await connection.execute(["EVAL", QueueScripts.claim, "2", keys.queue, processing, String(count)])
        guard let items = reply.array else { throw RedisError.unexpectedReply("claim: \(reply)") }
        return items.reversed().compactMap(\.bytes)
    }

    /// Waits up to `timeoutSeconds` for one element and moves it atomically: how an idle worker sleeps
    /// without polling. Nil when the wait ran out.
    public func waitAndClaimOne(timeoutSeconds: Double) async throws -> [UInt8]? {
        let reply = try await connection.execute(["BLMOVE", keys.queue, processing, "RIGHT", "LEFT", String(timeoutSeconds)])
        return reply.bytes
    }

    /// Acknowledges messages and writes their records atomically; returns how many were still claimed.
    @discardableResult
    public func acknowledge(_ messages: [CompletedMessage], filteredCap: Int) async throws -> Int {
        var command: [[UInt8]] = [
            Array("EVAL".utf8), Array(QueueScripts.acknowledge.utf8), Array("4".utf8),
            Array(processing.utf8), Array(keys.deadLetters.utf8), Array(keys.feedback.utf8), Array(keys.filtered.utf8),
            Array(String(filteredCap).utf8),
        ]
        command.reserveCapacity(command.count + messages.count * 3)
        for message in messages {
            command.append(message.raw)
            command.append(Array(String(message.records.count).utf8))
            for record in message.records { command.append(record.tagged) }
        }
        let reply = try await connection.execute(bytes: command)
        return Int(reply.integer ?? 0)
    }

    /// Everything this worker has claimed and not acknowledged.
    public func claimedElements() async throws -> [[UInt8]] {
        let reply = try await connection.execute(["LRANGE", processing, "0", "-1"])
        return (reply.array ?? []).compactMap(\.bytes)
    }

    /// Returns this worker's unacknowledged claims to the queue so they are consumed next.
    @discardableResult
    public func returnClaims() async throws -> Int {
        try await returnClaims(of: workerID, onlyIfDead: false)
    }

    /// Returns another worker's claims to the queue if its heartbeat has expired; -1 if it is alive.
    @discardableResult
    public func returnClaims(of worker: String, onlyIfDead: Bool) async throws -> Int {
        let reply = try await connection.execute([
            "EVAL", QueueScripts.returnToQueue, "3",
            keys.processing(worker: worker), keys.queue, keys.heartbeat(worker: worker), onlyIfDead ? "1" : "0",
        ])
        return Int(reply.integer ?? 0)
    }

    public func beat(ttlMillis: Int, info: String) async throws {
        try await connection.execute(["SET", keys.heartbeat(worker: workerID), info, "PX", String(ttlMillis)])
    }

    public func isAlive(_ worker: String) async throws -> Bool {
        try await connection.execute(["EXISTS", keys.heartbeat(worker: worker)]).integer == 1
    }

    public func clearHeartbeat() async throws {
        try await connection.execute(["DEL", keys.heartbeat(worker: workerID)])
    }

    /// Worker ids that have a processing list.
    public func workersWithClaims() async throws -> [String] {
        var cursor = "0"
        var workers: [String] = []
        repeat {
            let reply = try await connection.execute(["SCAN", cursor, "MATCH", keys.processingPattern, "COUNT", "500"])
            guard let parts = reply.array, parts.count == 2, let next = parts[0].string, let found = parts[1].array else {
                throw RedisError.unexpectedReply("SCAN: \(reply)")
            }
            cursor = next
            workers.append(contentsOf: found.compactMap { $0.string.flatMap(keys.worker(fromProcessingKey:)) })
        } while cursor != "0"
        return workers
    }
}
