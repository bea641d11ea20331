import Foundation
import Logging
import PushCore

/// One access token per service account, shared by every request and lane. A thread of its own asks the
/// token endpoint (the request blocks); callers read `state` (a lock held for no I/O) and report a rejected
/// token (`rejected(generation:)`). At most one request runs at a time and requests are at least a second
/// apart, so neither rejections from many streams nor a failing endpoint make a storm.
///
/// The token's states and their transitions are `AccessTokenLife`'s; this class adds the thread, the lock and
/// the clock (injected: a test gives a `ManualTransportClock`).
public final class AccessTokenCache: @unchecked Sendable, CustomStringConvertible {
    /// Asks for one token (blocking); the default signs an assertion and posts it to the endpoint. It should
    /// give up soon once `stopping` returns true.
    public typealias Exchange = @Sendable (_ stopping: @escaping @Sendable () -> Bool) -> TokenGrant

    /// The token's life, and the renewal thread's own (stopped, then exited).
    private struct Machine {
        var life = AccessTokenLife()
        var stopped = false
        var exited = false
        var exitWaiters: [CheckedContinuation<Void, Never>] = []
    }

    public let name: String
    /// Whose tokens these are (a provider module's service), for log lines.
    public let service: String
    private let exchange: Exchange
    private let clock: any TransportClock
    /// The system clock wakes the thread at the moment it waits for; a manual one moves without telling it, so
    /// the thread then looks again at least this often (real seconds).
    private let longestWait: Double
    private let refusedRetrySeconds: Double
    private let maxBackoffSeconds: Double
    private let onChange: (@Sendable (AccessTokenState) -> Void)?
    /// Lanes sleeping while no token could be had: woken after each change of state.
    private let sleepers = Locked<[any LaneWaking]>([])
    private let logger: Logger
    // Guards `machine` and wakes the renewal thread; never held across the exchange.
    private let condition = NSCondition()
    private var machine = Machine()

    /// - Parameters:
    ///   - name: what log lines and readiness call it (the app's topic, or the client email).
    ///   - refusedRetrySeconds: how long after a refusal the key is tried again (a clock fixed, a key restored).
    ///   - clock: whose uptime times the token's life, renewals and retries.
    ///   - onChange: called on the renewal thread after each change of state (readiness, waking lanes).
    /// The thread runs until `shutdown()`.
    ///   - service: whose tokens these are, for log lines, the logger's label and the thread's name (the
    ///     provider module's service).
    public init(name: String, service: String = "OAuth", refusedRetrySeconds: Double = 60, maxBackoffSeconds: Double = 30,
                clock: any TransportClock = SystemTransportClock(),
                onChange: (@Sendable (AccessTokenState) -> Void)? = nil, exchange: @escaping Exchange) {
        self.name = name
        self.exchange = exchange
        self.clock = clock
        longestWait = clock is SystemTransportClock ? .infinity : 0.01
        self.refusedRetrySeconds = max(AccessTokenRenewal.minimumInterval, refusedRetrySeconds)
        self.maxBackoffSeconds = max(AccessTokenRenewal.minimumInterval, maxBackoffSeconds)
        self.onChange = onChange
        self.service = service
        var logger = Logger(label: "push.\(service.lowercased()).access-token")
        logger[metadataKey: "account"] = "\(name)"
        self.logger = logger
        let thread = Thread { [self] in self.run() }
        thread.name = "\(service.lowercased())-token"
        thread.start()
    }

    public var description: String { "AccessTokenCache(\(name))" }

    /// What to do now: a token to use, or why there is none.
    public var state: AccessTokenState {
        condition.lock()
        defer { condition.unlock() }
        // Between the expiry and the renewal thread noticing it (it wakes at that moment), the view says expired.
        return machine.life.view(now: seconds())
    }

    /// Token requests sent so far (tests, metrics).
    public var requestCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return machine.life.requests
    }

    /// When the last (up to 16) token requests started, on the cache's clock.
    var recentRequestStarts: [Double] {
        condition.lock()
        defer { condition.unlock() }
        return machine.life.recentStarts
    }

    /// A server answered 401 to `generation`: unless a newer token exists, it is dropped and renewed now (no
    /// sooner than a second after the last request). Returns whether this call started a renewal.
    @discardableResult
    public func rejected(generation: Int) -> Bool {
        condition.lock()
        guard !machine.stopped, machine.life.rejected(generation: generation, now: seconds()) else {
            condition.unlock()
            return false
        }
        let state = machine.life.published
        condition.signal()
        condition.unlock()
        logger.warning("\(service) access token #\(generation) rejected by the server; renewing it")
        changed(state)
        return true
    }

    /// Wakes `lanes` after each change of state (a token granted after a wait: they send at once).
    public func wakeOnChange(_ lanes: [any LaneWaking]) {
        sleepers.withLock { $0 += lanes }
    }

    /// Tells the renewal thread to end, without waiting (a start that failed half way).
    public func stop() {
        sleepers.withLock { $0 = [] }  // the lanes hold this cache: the cycle ends here
        condition.lock()
        machine.stopped = true
        condition.signal()
        condition.unlock()
    }

    /// Ends the renewal thread (after the request in progress, bounded by the endpoint's timeout) and waits for it.
    public func shutdown() async {
        sleepers.withLock { $0 = [] }  // the lanes hold this cache: the cycle ends here
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            condition.lock()
            machine.stopped = true
            if machine.exited {
                condition.unlock()
                continuation.resume()
                return
            }
            machine.exitWaiters.append(continuation)
            condition.signal()
            condition.unlock()
        }
    }

    // MARK: - The renewal thread

    private enum Step {
        case ask(startedAt: Double)
        /// The token in use expired while renewals failed: callers must wait from now on.
        case expired(AccessTokenState)
        case stop
    }

    private func run() {
        loop: while true {
            switch nextStep() {
            case .ask(let started):
                let grant = exchange { [self] in isStopping }
                apply(grant, startedAt: started)
            case .expired(let state):
                logger.warning("\(service) access token expired before a new one could be had: \(state)")
                changed(state)
            case .stop:
                break loop
            }
        }
        condition.lock()
        machine.exited = true
        let waiters = machine.exitWaiters
        machine.exitWaiters = []
        condition.unlock()
        waiters.forEach { $0.resume() }
    }

    private var isStopping: Bool {
        condition.lock()
        defer { condition.unlock() }
        return machine.stopped
    }

    /// Waits until an attempt is due (and a second has passed since the last), or the token in use expires.
    private func nextStep() -> Step {
        condition.lock()
        defer { condition.unlock() }
        while !machine.stopped {
            let now = seconds()
            switch machine.life.next(now: now) {
            case .ask(let started): return .ask(startedAt: started)
            case .expired(let state): return .expired(state)
            case .wait(let until):
                _ = condition.wait(until: Date(timeIntervalSinceNow: min(until - now, longestWait, 86_400 * 365)))
            }
        }
        return .stop
    }

    private func apply(_ grant: TokenGrant, startedAt: Double) {
        condition.lock()
        if machine.stopped {
            // Abandoned for the shutdown, or answered too late to matter: nothing to tell anyone.
            condition.unlock()
            return
        }
        let now = seconds()
        let previous = machine.life.published
        var retryIn = 0.0
        switch grant {
        case .granted(let bearer, let expiresIn):
            machine.life.granted(bearer: bearer, expiresIn: expiresIn, startedAt: startedAt)
        case .unavailable(let reason):
            retryIn = machine.life.unavailable(reason: reason, now: now, backoff: backoff(failures:))
        case .refused(let reason):
            machine.life.refused(reason: reason, now: now, retryAfter: refusedRetrySeconds)
        }
        let state = machine.life.published
        let generation = machine.life.generation
        condition.unlock()

        switch grant {
        case .granted(_, let expiresIn):
            logger.info("\(service) access token #\(generation) obtained (expires in \(expiresIn) s)")
        case .unavailable(let reason):
            let using = state.token.map { " (token #\($0.generation) stays in use until it expires)" } ?? ""
            logger.warning("\(service) access token request failed, asking again in \(Int(retryIn.rounded(.up))) s\(using): \(reason)")
        case .refused(let reason):
            if case .refused = previous {
                logger.error("\(service) access token still refused for \(name): \(reason)")
            } else {
                logger.error("\(service) access token refused for \(name); the app pauses until the key is accepted: \(reason)")
            }
        }
        if state != previous { changed(state) }
    }

    /// 1, 2, 4, ... seconds up to `maxBackoffSeconds`, with jitter so that many accounts do not ask in step.
    private func backoff(failures: Int) -> Double {
        // Milliseconds for the shared Backoff; a bound too large for them (it is at least the minimum) is a day.
        let maxMillis = maxBackoffSeconds < 86_400 ? Int(maxBackoffSeconds * 1000) : 86_400_000
        let backoff = Backoff(baseMillis: Int(AccessTokenRenewal.minimumInterval * 1000), maxMillis: maxMillis, lowestPercent: 80)
        return Double(backoff.delayMillis(attempt: failures)) / 1000
    }

    private func changed(_ state: AccessTokenState) {
        onChange?(state)
        for lane in sleepers.withLock({ $0 }) { lane.wake() }
    }

    /// The cache's clock in seconds.
    private func seconds() -> Double {
        Double(clock.uptimeNanoseconds()) / 1_000_000_000
    }

    /// The system's uptime in seconds (the clock the cache uses unless given another).
    public static func monotonicSeconds() -> Double {
        Double(SystemTransportClock().uptimeNanoseconds()) / 1_000_000_000
    }
}
