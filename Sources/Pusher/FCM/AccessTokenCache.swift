import Foundation
import Logging
import PushCore

/// One access token per service account, shared by every request and lane. A thread of its own asks the
/// token endpoint (the request blocks); callers read `state` (a lock held for no I/O) and report a rejected
/// token (`rejected(generation:)`). At most one request runs at a time and requests are at least a second
/// apart, so neither rejections from many streams nor a failing endpoint make a storm.
///
/// The renewal thread's states: waiting until the next attempt is due (the renewal moment, a backoff after a
/// failure, or now after a rejection), asking, stopped.
public final class AccessTokenCache: @unchecked Sendable, CustomStringConvertible {
    /// Asks for one token (blocking); the default signs an assertion and posts it to the endpoint. It should
    /// give up soon once `stopping` returns true.
    public typealias Exchange = @Sendable (_ stopping: @escaping @Sendable () -> Bool) -> TokenGrant

    private struct Machine {
        var state: AccessTokenState = .unavailable(reason: "the first access token is being requested")
        var nextAttempt = 0.0
        var lastAttempt = -Double.infinity
        var asking = false
        /// Why the last request got no token (said when the token in use expires meanwhile).
        var lastFailure: String?
        var stopped = false
        var exited = false
        var failures = 0
        var generation = 0
        var requests = 0
        /// When the last few requests started (tests check the one-second floor on them).
        var recentStarts: [Double] = []
        var exitWaiters: [CheckedContinuation<Void, Never>] = []
    }

    public let name: String
    private let exchange: Exchange
    private let clock: @Sendable () -> Double
    private let refusedRetrySeconds: Double
    private let maxBackoffSeconds: Double
    private let onChange: (@Sendable (AccessTokenState) -> Void)?
    /// Lanes sleeping while no token could be had: woken after each change of state.
    private let sleepers = Locked<[Scheduler]>([])
    private let logger: Logger
    // Guards `machine` and wakes the renewal thread; never held across the exchange.
    private let condition = NSCondition()
    private var machine = Machine()

    /// - Parameters:
    ///   - name: what log lines and readiness call it (the app's topic, or the client email).
    ///   - refusedRetrySeconds: how long after a refusal the key is tried again (a clock fixed, a key restored).
    ///   - onChange: called on the renewal thread after each change of state (readiness, waking lanes).
    /// The thread runs until `shutdown()`.
    public init(name: String, refusedRetrySeconds: Double = 60, maxBackoffSeconds: Double = 30,
                clock: @escaping @Sendable () -> Double = AccessTokenCache.monotonicSeconds,
                onChange: (@Sendable (AccessTokenState) -> Void)? = nil, exchange: @escaping Exchange) {
        self.name = name
        self.exchange = exchange
        self.clock = clock
        self.refusedRetrySeconds = max(AccessTokenRenewal.minimumInterval, refusedRetrySeconds)
        self.maxBackoffSeconds = max(AccessTokenRenewal.minimumInterval, maxBackoffSeconds)
        self.onChange = onChange
        var logger = Logger(label: "push.fcm.access-token")
        logger[metadataKey: "account"] = "\(name)"
        self.logger = logger
        let thread = Thread { [self] in self.run() }
        thread.name = "fcm-token"
        thread.start()
    }

    /// The usual cache: `signer`'s assertions posted to `endpoint`.
    public convenience init(signer: AssertionSigner, endpoint: TokenEndpoint, name: String? = nil,
                            refusedRetrySeconds: Double = 60, onChange: (@Sendable (AccessTokenState) -> Void)? = nil) {
        self.init(name: name ?? signer.clientEmail, refusedRetrySeconds: refusedRetrySeconds, onChange: onChange) { stopping in
            endpoint.exchange(signedBy: signer, abandon: stopping)
        }
    }

    public var description: String { "AccessTokenCache(\(name))" }

    /// What to do now: a token to use, or why there is none.
    public var state: AccessTokenState {
        condition.lock()
        defer { condition.unlock() }
        // Between the expiry and the renewal thread noticing it (it wakes at that moment).
        if case .ready(let token) = machine.state, clock() >= token.expiresAt { return expiredState() }
        return machine.state
    }

    /// Token requests sent so far (tests, metrics).
    public var requestCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return machine.requests
    }

    /// When the last (up to 16) token requests started, on the cache's clock.
    var recentRequestStarts: [Double] {
        condition.lock()
        defer { condition.unlock() }
        return machine.recentStarts
    }

    /// A server answered 401 to `generation`: unless a newer token exists, it is dropped and renewed now (no
    /// sooner than a second after the last request). Returns whether this call started a renewal.
    @discardableResult
    public func rejected(generation: Int) -> Bool {
        condition.lock()
        guard !machine.stopped, case .ready(let token) = machine.state, token.generation == generation else {
            condition.unlock()
            return false
        }
        let state = AccessTokenState.unavailable(reason: "the access token was rejected (401); a new one is being requested")
        machine.state = state
        machine.nextAttempt = clock()
        condition.signal()
        condition.unlock()
        logger.warning("FCM access token #\(generation) rejected by the server; renewing it")
        changed(state)
        return true
    }

    /// Wakes `lanes` after each change of state (a token granted after a wait: they send at once).
    func wakeOnChange(_ lanes: [Scheduler]) {
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
                logger.warning("FCM access token expired before a new one could be had: \(state)")
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
            let now = clock()
            let expiry = machine.state.token?.expiresAt ?? .infinity
            if now >= expiry {
                machine.state = expiredState()
                return .expired(machine.state)
            }
            let due = max(machine.nextAttempt, machine.lastAttempt + AccessTokenRenewal.minimumInterval)
            if now >= due {
                machine.lastAttempt = now
                machine.asking = true
                machine.requests += 1
                if machine.recentStarts.count == 16 { machine.recentStarts.removeFirst() }
                machine.recentStarts.append(now)
                return .ask(startedAt: now)
            }
            _ = condition.wait(until: Date(timeIntervalSinceNow: min(due, expiry) - now))
        }
        return .stop
    }

    /// Under the lock.
    private func expiredState() -> AccessTokenState {
        .unavailable(reason: "the access token expired before a new one could be had"
            + (machine.lastFailure.map { " (\($0))" } ?? ""))
    }

    private func apply(_ grant: TokenGrant, startedAt: Double) {
        condition.lock()
        machine.asking = false
        if machine.stopped {
            // Abandoned for the shutdown, or answered too late to matter: nothing to tell anyone.
            condition.unlock()
            return
        }
        let now = clock()
        let previous = machine.state
        var retryIn = 0.0
        switch grant {
        case .granted(let bearer, let expiresIn):
            machine.generation += 1
            machine.failures = 0
            machine.lastFailure = nil
            // Timed from the request, not the answer: the token's life began no later than that.
            machine.state = .ready(AccessToken(bearer: bearer, expiresIn: expiresIn, generation: machine.generation,
                                               expiresAt: startedAt + Double(expiresIn)))
            machine.nextAttempt = startedAt + AccessTokenRenewal.renewAfter(expiresIn: expiresIn)
        case .unavailable(let reason):
            machine.failures += 1
            machine.lastFailure = reason
            let delay = backoff(failures: machine.failures)
            retryIn = delay
            machine.nextAttempt = now + delay
            // A token still valid stays in use while renewal fails; otherwise callers wait, and say why.
            if case .ready(let token) = machine.state, now < token.expiresAt {
                break
            }
            let said = reason.hasSuffix(".") ? String(reason.dropLast()) : reason
            machine.state = .unavailable(reason: "\(said); asking again in \(Int(delay.rounded(.up))) s")
        case .refused(let reason):
            machine.failures += 1
            machine.lastFailure = reason
            machine.nextAttempt = now + refusedRetrySeconds
            machine.state = .refused(reason: reason)
        }
        let state = machine.state
        let generation = machine.generation
        condition.unlock()

        switch grant {
        case .granted(_, let expiresIn):
            logger.info("FCM access token #\(generation) obtained (expires in \(expiresIn) s)")
        case .unavailable(let reason):
            let using = state.token.map { " (token #\($0.generation) stays in use until it expires)" } ?? ""
            logger.warning("FCM access token request failed, asking again in \(Int(retryIn.rounded(.up))) s\(using): \(reason)")
        case .refused(let reason):
            if case .refused = previous {
                logger.error("FCM access token still refused for \(name): \(reason)")
            } else {
                logger.error("FCM access token refused for \(name); the app pauses until the key is accepted: \(reason)")
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

    public static func monotonicSeconds() -> Double {
        Double(DispatchTime.now().uptimeNanoseconds) / 1_000_000_000
    }
}
