import Foundation
import ProviderKit
import PushCore
import Pusher
import XCTest

/// A driver that sends nothing: it records what the scheduler starts and cancels, completes requests when a test
/// says so, and lets the scheduler's loop run only when a test steps it (`step`), so that a test moves the
/// scheduler and a `ManualTransportClock` in turns and never waits for time to pass.
public final class ScriptedDriver: TransportDriver, @unchecked Sendable {
    public struct Start {
        public let id: Int
        /// The request's first token (the only one unless the service takes a list).
        public let token: String
        /// Every token of the request, in the order it lists them.
        public let tokens: [String]
        /// The scheduler's clock when it started the request (`DriverRequest.now`).
        public let at: UInt64
    }

    // Everything below is guarded by `condition`: the scheduler's thread and the test's both use it.
    private let condition = NSCondition()
    private var started: [Start] = []
    private var onWire: [Int: UInt64] = [:]
    private var cancelledIDs: [Int] = []
    private var pending: [DriverCompletion] = []
    /// `wake` was called and the loop has not yet taken it.
    private var woken = false
    /// The loop sleeps in `wait` until it is woken.
    private var sleeping = false
    /// Calls of `wait`: one per turn of the loop.
    private var turns = 0

    private func locked<T>(_ body: () -> T) -> T {
        condition.lock()
        defer { condition.unlock() }
        return body()
    }

    public init() {}

    // MARK: the scheduler's side

    package func room(limit: Int) -> Int { limit }

    package func start(_ request: DriverRequest) {
        locked {
            var tokens: [String] = []
            request.tokens.forEach { _, index in tokens.append(request.job.job.tokens[index]) }
            started.append(Start(id: request.id, token: tokens[0], tokens: tokens, at: request.now))
            onWire[request.id] = request.now
        }
    }

    package func cancel(id: Int) {
        locked {
            onWire[id] = nil
            cancelledIDs.append(id)
        }
    }

    package func onWireSince(id: Int) -> UInt64? { locked { onWire[id] } }

    package func process(into completions: inout [DriverCompletion]) {
        let ready = locked { () -> [DriverCompletion] in
            defer { pending = [] }
            return pending
        }
        completions += ready
    }

    /// Sleeps until woken, whatever the timeout: time passes only when the test moves the clock.
    package func wait(timeoutMillis: Int32) {
        condition.lock()
        defer { condition.unlock() }
        turns += 1
        while !woken {
            sleeping = true
            condition.broadcast()
            condition.wait()
        }
        sleeping = false
        woken = false
    }

    package func wake() {
        locked {
            woken = true
            condition.broadcast()
        }
    }

    package func close() -> [Int] { locked { Array(onWire.keys) } }
    package func noteWaitingWork(_ waiting: Bool) {}
    package var openConnections: Int { 1 }
    package var streamsLimit: Int? { nil }

    // MARK: the test's side

    public var starts: [Start] { locked { started } }
    public var cancelled: [Int] { locked { cancelledIDs } }
    public var inFlight: [Int] { locked { onWire.keys.sorted() } }

    /// The request `id` is answered with `status` (and a `retry-after` value); the next turn takes it.
    public func answer(_ id: Int, status: Int, body: String = "", retryAfter: String? = nil) {
        locked {
            onWire[id] = nil
            pending.append(DriverCompletion(id: id, result: .answered(status: status, body: Array(body.utf8), wireMicros: 1000,
                                                                      retryAfter: retryAfter)))
        }
    }

    /// Returns once a whole turn of the scheduler's loop has run that began after this call: what it read from
    /// the clock and the driver is what the test had set up. Waits for the event, not for time (the deadline
    /// only turns a scheduler that stopped into a failure rather than a hang).
    public func step(file: StaticString = #filePath, line: UInt = #line) {
        condition.lock()
        defer { condition.unlock() }
        let before = turns
        woken = true
        condition.broadcast()
        let deadline = Date().addingTimeInterval(30)
        // Woken while in a turn, the loop finishes it, takes the wake at once and runs a whole turn more before
        // it sleeps; asleep, it runs one. Either way: a later turn, asleep again, the wake taken.
        while !(turns > before && sleeping && !woken) {
            if !condition.wait(until: deadline) {
                XCTFail("the scheduler's loop did not come round", file: file, line: line)
                return
            }
        }
    }
}

