import Logging
import PushCore
import QueueProtocol

/// Puts an app's parked messages back on their input list once the app can send their class again (isolation,
/// docs/architecture.md), and keeps what is held in plain sight. Every second, for each app and message class this
/// worker sends for: the parked list's length and the age of its oldest message go to `push_parked` and
/// `push_parked_oldest_age_seconds`; while the class waits, why and until when goes to the shard's
/// `parked-reasons` hash (for `worker status`); once it can be sent, the oldest parked messages go back to the
/// consumer end of the class's input list, in order, a thousand per script call. A worker whose lanes for the app
/// still wait leaves them; any worker that can send for it takes them back.
public struct Unparker: Sendable {
    public let queue: WorkQueue
    let board: AppWaitBoard
    let logger: Logger
    /// The most one pass moves per app and class: a long parked backlog goes back a slice per second, so the
    /// input list never balloons ahead of what the pipeline takes.
    static let perPass = 20_000
    static let perCall = 1000
    static let interval = Duration.seconds(1)
    static let wakeCheck = Duration.milliseconds(50)
    /// What this worker wrote to the reasons hash, so that it rewrites an entry only when it changes (or to show it
    /// is still held, every `refreshMillis`) and removes its own when the class is sent again.
    private let written = Locked([String: (json: String, atMillis: Int64, sinceMillis: Int64)]())
    static let refreshMillis: Int64 = 10_000
    /// The reason each parked list's gauge was last reported under.
    private let lastReasons = Locked([String: String]())

    public init(queue: WorkQueue, board: AppWaitBoard, logger: Logger) {
        self.queue = queue
        self.board = board
        self.logger = logger
    }

    /// Until cancelled (the worker's shutdown): a pass every `interval`, and at once (within `wakeCheck`) when what
    /// waits changes, so that an app that can send again has its parked messages back in a moment, not a round later.
    public func run() async {
        var failing = false
        while !Task.isCancelled {
            let seen = board.changeCount
            do {
                try await pass()
                failing = false
            } catch {
                if !failing { logger.warning("cannot put parked messages back yet; retrying", metadata: ["error": "\(error)"]) }
                failing = true
            }
            let next = ContinuousClock.now + Self.interval
            while ContinuousClock.now < next && board.changeCount == seen {
                guard (try? await Task.sleep(for: Self.wakeCheck)) != nil else { return }
            }
        }
    }

    /// One look at every app and class: returns how many messages went back.
    @discardableResult
    public func pass() async throws -> Int {
        let lists = board.apps.flatMap { app in MessageClass.allCases.map { (app, $0) } }
        guard !lists.isEmpty else { return 0 }
        let keys = lists.map { queue.keys.parked(provider: $0.0.provider, topic: $0.0.topic, messageClass: $0.1) }
        let lengths = try await queue.connection.pipeline(keys.map { [Array("LLEN".utf8), Array($0.utf8)] })
        var total = 0
        for (index, (app, messageClass)) in lists.enumerated() {
            let key = keys[index]
            let length = Int(lengths[index].integer ?? 0)
            let hold = board.hold(app, messageClass: messageClass)
            try await record(key: key, app: app, messageClass: messageClass, hold: hold, length: length)
            guard hold == nil, length > 0 else { continue }
            var moved = 0
            while moved < Self.perPass, !Task.isCancelled, !board.isWaiting(app, messageClass: messageClass) {
                let count = try await queue.unpark(provider: app.provider, topic: app.topic, messageClass: messageClass,
                                                   maxCount: Self.perCall)
                moved += count
                if count < Self.perCall { break }
            }
            if moved > 0 {
                PushMetrics.shared.messagesUnparked(provider: app.provider, app: app.topic, count: moved)
                logger.info("parked messages go back to the queue: their app can send them again", metadata: [
                    "provider": "\(app.provider.rawValue)", "app": "\(app.topic)", "class": "\(messageClass.rawValue)",
                    "list": "\(queue.keys.queue(messageClass.lane))", "messages": "\(moved)",
                ])
            }
            total += moved
        }
        return total
    }

    /// The gauges of one parked list, and its entry in the reasons hash while its class waits.
    private func record(key: String, app: AppWaitBoard.App, messageClass: MessageClass,
                        hold: (reason: String, untilWallMillis: Int64?)?, length: Int) async throws {
        let shown = hold.map { Printable.clipped($0.reason, to: 120) } ?? ""
        // A reason that changed leaves its series at 0, so a sum over reasons counts each message once.
        if let before = lastReasons.withLock({ $0.updateValue(shown, forKey: key) }), before != shown {
            PushMetrics.shared.parked(provider: app.provider, app: app.topic, messageClass: messageClass, reason: before, messages: 0)
        }
        PushMetrics.shared.parked(provider: app.provider, app: app.topic, messageClass: messageClass, reason: shown, messages: length)
        ParkedLengths.shared.record(key, length: length)
        var oldestAge: Int64 = 0
        let now = WallClock.nowMillis()
        // Read inside Redis, as the input lists' age is: the oldest element is not copied here each second.
        if length > 0 {
            let reply = try await queue.connection.execute(QueuedAge.oldestCommand(list: key, maxElementBytes: queue.maxElementBytes))
            oldestAge = (QueuedAge.millis(enqueuedAt: reply, nowMillis: now) ?? 0) / 1000
        }
        PushMetrics.shared.parkedOldestAge(provider: app.provider, app: app.topic, messageClass: messageClass, seconds: oldestAge)
        let field = key + "|" + queue.workerID
        guard let hold else {
            if written.withLock({ $0.removeValue(forKey: field) }) != nil {
                _ = try await queue.connection.execute(["HDEL", queue.keys.parkedReasons, field])
            }
            return
        }
        let previous = written.withLock { $0[field] }
        let since = previous?.sinceMillis ?? now
        let members: [(String, JSONValue)] = [
            ("list", .string(key)), ("provider", .string(app.provider.rawValue)), ("app", .string(app.topic)),
            ("class", .string(messageClass.rawValue)), ("reason", .string(shown)), ("since_ms", .number(String(since))),
            ("until_ms", hold.untilWallMillis.map { .number(String($0)) } ?? .null), ("worker", .string(queue.workerID)),
        ]
        let entry = String(decoding: JSONWriter.canonical(.object(members.map { JSONMember(key: $0.0, value: $0.1) })), as: UTF8.self)
        guard previous?.json != entry || now - (previous?.atMillis ?? 0) >= Self.refreshMillis else { return }
        let stamped = String(entry.dropLast()) + ",\"seen_ms\":\(now)}"
        _ = try await queue.connection.execute(["HSET", queue.keys.parkedReasons, field, stamped])
        written.withLock { $0[field] = (entry, now, since) }
    }
}
