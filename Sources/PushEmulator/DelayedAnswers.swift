import NIOCore

/// One connection's answers that wait out the emulated round trip (`latencyMillis` and `jitterMillis`, FCM's
/// injected delay): written by one timer per connection, all the answers due in the same millisecond together, with
/// one flush of the connection per batch.
///
/// Why: with a timer per answer, each answer was written outside a read loop, where swift-nio-http2 flushes the
/// connection for every stream's flush: one TLS record and one write syscall per answer. A profile at 50 ms with
/// 4,000 requests in flight on one event loop showed a quarter of the thread in those flushes and another quarter
/// in retain/release, much of it NIO's heap of 4,000 scheduled tasks; the emulator topped out near 20,000-24,000
/// answers/s while requests queued, slower than the senders it is there to test.
///
/// Due times are rounded up to the next millisecond: an answer never leaves before its delay, and at most 1 ms
/// later. When the event loop is busy it reaches the timer late, and every answer due by then goes in the batch:
/// batches grow with the load. The handler sits in the connection's pipeline between TLS and HTTP/2: while a batch
/// is written, the flush each stream's answer sends down to the connection is held here, and passed on once when
/// the batch is out (or before a GOAWAY: `flushWrittenAnswers`). Touched only on the connection's event loop.
final class DelayedAnswers: ChannelOutboundHandler {
    typealias OutboundIn = Any

    /// An answer never waits longer than this (ms): no setting can make the due time overflow.
    static let longestDelayMillis = 7 * 24 * 3_600_000

    private let stats: EmulatorStats
    /// Due times are the uptime clock's nanoseconds (`NIODeadline`).
    private var queue = DueTimeQueue<() -> Void>()
    private var context: ChannelHandlerContext?
    /// The one pending timer, and when it fires.
    private var timer: (task: Scheduled<Void>, due: UInt64)?
    private var writingBatch = false
    private var flushHeld = false

    init(stats: EmulatorStats) {
        self.stats = stats
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    /// The connection closed: its streams are gone, and so are the answers they were waiting for.
    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.task.cancel()
        timer = nil
        queue.removeAll()
        self.context = nil
    }

    func flush(context: ChannelHandlerContext) {
        if writingBatch {
            flushHeld = true
        } else {
            context.flush()
        }
    }

    /// Passes on at once the flush held for the answers written so far in this batch (none outside a batch). A
    /// GOAWAY written in a batch goes out between two of these, in a TLS record of its own, as it did when each
    /// answer had a timer of its own: a client may read the answers before it, and send new requests before it
    /// reads the GOAWAY (requests above its last stream id, which it must send again elsewhere).
    func flushWrittenAnswers() {
        guard writingBatch, flushHeld else { return }
        flushHeld = false
        context?.flush()
    }

    /// Runs `answer` (which writes one stream's answer, flushed) on the event loop once `delayMillis` have passed.
    /// Dropped when the connection closes first.
    func answer(afterMillis delayMillis: Int, _ answer: @escaping () -> Void) {
        guard let context else { return }
        let delay = UInt64(min(max(0, delayMillis), Self.longestDelayMillis))
        // Up to the next whole millisecond: the answers due within one go out together.
        let due = (NIODeadline.now().uptimeNanoseconds + delay * 1_000_000 + 999_999) / 1_000_000 * 1_000_000
        queue.insert(answer, due: due)
        scheduleTimer(due: due, on: context.eventLoop)
    }

    private func scheduleTimer(due: UInt64, on eventLoop: EventLoop) {
        if let timer {
            // With jitter an answer can fall due before the one the timer waits for.
            guard due < timer.due else { return }
            timer.task.cancel()
        }
        let task = eventLoop.assumeIsolated().scheduleTask(deadline: .uptimeNanoseconds(due)) {
            self.timer = nil
            self.writeDueAnswers()
        }
        timer = (task, due)
    }

    private func writeDueAnswers() {
        let now = NIODeadline.now().uptimeNanoseconds
        var written = 0
        writingBatch = true
        while let answer = queue.removeFirst(dueBy: now) {
            answer()
            written += 1
        }
        writingBatch = false
        if flushHeld {
            flushHeld = false
            context?.flush()
        }
        stats.delayedAnswersWritten(written)
        if let context, let next = queue.firstDue {
            scheduleTimer(due: next, on: context.eventLoop)
        }
    }
}
