import Logging
import PushCore
import QueueProtocol

/// Puts an app's parked messages back on their input list once the app can send again (isolation,
/// docs/architecture.md): every second, for each app this worker sends for that is not waiting, the oldest
/// parked messages go back to the consumer end of their list, in order, a thousand per script call. A worker
/// whose lanes for the app still wait leaves them; any worker that can send for it takes them back.
public struct Unparker: Sendable {
    public let queue: WorkQueue
    let board: AppWaitBoard
    let logger: Logger
    /// The most one pass moves per app and list: a long parked backlog goes back a slice per second, so the
    /// input list never balloons ahead of what the pipeline takes.
    static let perPass = 20_000
    static let perCall = 1000
    static let interval = Duration.seconds(1)

    public init(queue: WorkQueue, board: AppWaitBoard, logger: Logger) {
        self.queue = queue
        self.board = board
        self.logger = logger
    }

    /// Until cancelled (the worker's shutdown).
    public func run() async {
        var failing = false
        while !Task.isCancelled {
            do {
                try await pass()
                failing = false
            } catch {
                if !failing { logger.warning("cannot put parked messages back yet; retrying", metadata: ["error": "\(error)"]) }
                failing = true
            }
            guard (try? await Task.sleep(for: Self.interval)) != nil else { return }
        }
    }

    /// One look at every app: returns how many messages went back.
    @discardableResult
    public func pass() async throws -> Int {
        var total = 0
        for app in board.apps where !board.isWaiting(app) {
            for lane in Lane.allCases {
                var moved = 0
                while moved < Self.perPass, !Task.isCancelled, !board.isWaiting(app) {
                    let count = try await queue.unpark(provider: app.provider, topic: app.topic, lane: lane, maxCount: Self.perCall)
                    moved += count
                    if count < Self.perCall { break }
                }
                if moved > 0 {
                    PushMetrics.shared.messagesUnparked(provider: app.provider, app: app.topic, count: moved)
                    logger.info("parked messages go back to the queue: their app can send again", metadata: [
                        "provider": "\(app.provider.rawValue)", "app": "\(app.topic)", "list": "\(queue.keys.queue(lane))",
                        "messages": "\(moved)",
                    ])
                }
                total += moved
            }
        }
        return total
    }
}
