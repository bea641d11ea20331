import PushCore

/// A token bucket on the caller's clock: `rate` units a second flow in, up to `capacity` (the burst; one
/// second's worth unless given), and a send takes what it spends. Times are uptime nanoseconds passed in by the
/// caller, never read here, so a test states the clock and the arithmetic is exact.
///
/// The fraction of a unit that has flowed in but not yet made a whole one is kept (`credit`, in billionths of a
/// unit: `rate` of them per nanosecond), so reading the bucket every millisecond at 3 a second still yields 3 a
/// second; a bucket that only counted whole units per call would yield none. Products of a time and a rate are
/// taken at full width (128 bits), so no rate up to `Int.max` and no jump of the clock overflows: past what a
/// bucket can hold, it is full. A clock that goes backwards is read as no time passing. A value type: the owner
/// guards it (`AppRateLimit` holds its buckets under one lock).
struct TokenBucket {
    static let nanosPerSecond: UInt64 = 1_000_000_000

    /// Units per second, at least 1.
    private(set) var rate: Int
    /// The most the bucket holds, at least 1: the largest burst after a quiet spell.
    private(set) var capacity: Int
    private var units: Int
    /// Billionths of a unit on top of `units` (below 1,000,000,000); 0 while the bucket is full.
    private var credit: UInt64 = 0
    /// Up to when the flow has been counted in (never moves backwards).
    private var counted: UInt64 = 0

    /// Starts full. A rate or capacity below 1 counts as 1 (nonsense, but no input may trap).
    init(rate: Int, capacity: Int? = nil) {
        self.rate = max(1, rate)
        self.capacity = max(1, capacity ?? rate)
        units = self.capacity
    }

    /// The units in the bucket at `now`.
    mutating func available(now: UInt64) -> Int {
        (units, credit, counted) = filled(now: now)
        return units
    }

    /// Spends `n` units at `now` (the caller takes at most what is `available`; more empties the bucket).
    mutating func take(_ n: Int, now: UInt64) {
        (units, credit, counted) = filled(now: now)
        units -= min(max(0, n), units)
    }

    /// How long from `now` until `n` units are in the bucket (0: they are). More than the capacity never
    /// gathers: the wait is then for a full bucket, which is all a caller can get. `UInt64.max` when the wait
    /// is longer than that.
    func nanosUntil(_ n: Int, now: UInt64) -> UInt64 {
        let (units, credit, counted) = filled(now: now)
        let wanted = min(max(0, n), capacity)
        guard wanted > units else { return 0 }
        // Billionths of a unit still missing, rounded up to whole nanoseconds of flow: below 2^94, no overflow.
        var missing = UInt64(wanted - units).multipliedFullWidth(by: Self.nanosPerSecond)
        let (low, borrow) = missing.low.subtractingReportingOverflow(credit)
        missing = (missing.high &- (borrow ? 1 : 0), low)
        let (rounded, carry) = missing.low.addingReportingOverflow(UInt64(rate) - 1)
        missing = (missing.high &+ (carry ? 1 : 0), rounded)
        guard missing.high < UInt64(rate) else { return .max }
        let wait = UInt64(rate).dividingFullWidth(missing).quotient
        // With `now` behind the time already counted in, the flow resumes from that time, not from `now`.
        let (total, overflow) = wait.addingReportingOverflow(counted > now ? counted - now : 0)
        return overflow ? .max : total
    }

    /// A new rate and capacity from `now` on: what flowed in until `now` counts at the old rate, and the bucket
    /// never holds more than the new capacity.
    mutating func setRate(_ rate: Int, capacity: Int? = nil, now: UInt64) {
        (units, credit, counted) = filled(now: now)
        self.rate = max(1, rate)
        self.capacity = max(1, capacity ?? rate)
        if units >= self.capacity {
            units = self.capacity
            credit = 0
        }
    }

    /// The bucket as of `now`, without changing it.
    private func filled(now: UInt64) -> (units: Int, credit: UInt64, counted: UInt64) {
        guard now > counted else { return (units, credit, counted) }
        guard units < capacity else { return (capacity, 0, now) }
        // Elapsed nanoseconds times the rate, plus the credit: billionths of a unit, at full width. The high
        // half stays below 2^63, so adding the carry cannot overflow.
        var flowed = (now - counted).multipliedFullWidth(by: UInt64(rate))
        let (low, carry) = flowed.low.addingReportingOverflow(credit)
        flowed = (flowed.high &+ (carry ? 1 : 0), low)
        // 2^64 units or more: full, whatever the capacity.
        guard flowed.high < Self.nanosPerSecond else { return (capacity, 0, now) }
        let (whole, fraction) = Self.nanosPerSecond.dividingFullWidth(flowed)
        guard whole < UInt64(capacity - units) else { return (capacity, 0, now) }
        return (units + Int(whole), fraction, now)
    }
}

/// What an app's rate limit lets a lane do now.
public enum RateGrant: Equatable, Sendable {
    /// One request may start now, carrying `tokens` tokens (at most what was asked for); both are charged.
    case go(tokens: Int)
    /// Nothing may start; ask again after this long.
    case wait(nanos: UInt64)
}

/// An app's rate limits as the vendor counts them (`requests_per_s`: a vendor that counts requests; `tokens_per_s`:
/// one that counts devices, the tokens a request carries), one token bucket each, shared by all the app's lanes.
///
/// The vendors answer a send over the rate with an error, not with flow control: with a code of their own, or
/// with HTTP 503 ("flow control"). Nothing slows the sender down on the wire as HTTP/2 windows or a server's stream
/// limits do, and every over-rate answer is a request failed, to be sent again. So the rate is kept on this
/// side, before a request starts: a lane asks for a `grant` and either starts one request at once or sleeps for
/// the time given. With a tokens limit a request waits until the bucket holds its whole batch (a batch larger
/// than the bucket goes a bucketful at a time): cutting it to what trickled in would spend the vendor's request
/// count on requests of a token or two.
///
/// The configured rate is the vendor's published quota, and the vendor may count differently (its own windows,
/// its own clock, quotas changed in its console). An over-rate answer (`overRate`) therefore halves the rates in
/// effect, down to a sixteenth of the configured ones (at least 1 a second); once per `lowerSpacingNanos`,
/// since the requests in flight when the vendor began refusing all come back over the rate together, and are
/// one event. After `recoveryNanos` without an over-rate answer the rates double, one step per period, up to the
/// configured ones. Each bucket holds one second of its rate in effect: after a quiet spell a burst of that
/// second's worth goes at once, and a vendor counting fixed one-second windows may then see up to twice the rate
/// (less one) in the burst's window, answer the excess over the rate, and so lower it.
///
/// The vendors count an app's rate across every sender, so a worker's rate is not the app's: with `fleet`, the
/// grants come from permits that the workers take in batches from a budget in Redis (`FleetRateShare`,
/// `FleetRateRefiller`), and an over-rate answer lowers the fleet's rate. The buckets here then stand by: they
/// keep this worker to the configured rate while Redis cannot be reached (and in tests without Redis).
///
/// Both limits unset: `isUnlimited`, and `grant` answers at once without the lock (`unlimited` is the shared
/// instance for apps without limits). Otherwise the buckets live under one lock, so the lanes (threads) of an
/// app cannot hand out more between them than the buckets hold. Times are uptime nanoseconds from the callers.
public final class AppRateLimit: Sendable {
    /// No limits: every grant goes at once with the whole batch.
    public static let unlimited = AppRateLimit(requestsPerSecond: nil, tokensPerSecond: nil)

    /// The configured rates (nil: no limit), at least 1 when set.
    public let requestsPerSecond: Int?
    public let tokensPerSecond: Int?
    /// Neither limit set: nothing to count, no lock taken.
    public let isUnlimited: Bool
    /// Over-rate answers within this long of the last lowering lower nothing more.
    public let lowerSpacingNanos: UInt64
    /// This long without an over-rate answer doubles the rates in effect (up to the configured ones).
    public let recoveryNanos: UInt64

    private struct State {
        var requests: TokenBucket?
        var tokens: TokenBucket?
        /// When the rates were last lowered (nil: never).
        var lastLowered: UInt64?
        /// The last over-rate answer or the last step back up: the next step is `recoveryNanos` after it.
        var calmSince: UInt64 = 0
    }

    private let state: Locked<State>
    /// The app's budget across the fleet (nil: this worker's rate is the app's): while it reaches Redis, grants
    /// come from its permits and the buckets here stand by.
    public let fleet: FleetRateShare?
    /// How soon a lane asks again when the fleet's permits are on their way.
    static let fleetPollNanos: UInt64 = 2_000_000

    /// `requestsPerSecond`, `tokensPerSecond`: nil for no limit; below 1 counts as 1 (nonsense, but no input may
    /// trap: the configuration should refuse it). `fleet`: the app's share of its fleet-wide budget.
    public init(requestsPerSecond: Int?, tokensPerSecond: Int?, fleet: FleetRateShare? = nil,
         lowerSpacingNanos: UInt64 = 1_000_000_000, recoveryNanos: UInt64 = 30_000_000_000) {
        self.fleet = fleet
        self.requestsPerSecond = requestsPerSecond.map { max(1, $0) }
        self.tokensPerSecond = tokensPerSecond.map { max(1, $0) }
        isUnlimited = requestsPerSecond == nil && tokensPerSecond == nil
        self.lowerSpacingNanos = lowerSpacingNanos
        self.recoveryNanos = recoveryNanos
        state = Locked(State(requests: self.requestsPerSecond.map { TokenBucket(rate: $0) },
                             tokens: self.tokensPerSecond.map { TokenBucket(rate: $0) }))
    }

    /// Whether one request carrying up to `tokensWanted` tokens may start at `now`: `.go` charges one request
    /// and the tokens it names; `.wait` says how long until both buckets can grant again. A request waits until
    /// the tokens bucket holds all it wants (or, wanting more than the bucket can hold, a full bucket): cutting it
    /// to what trickled in would spend the vendor's request count on requests of a token or two.
    public func grant(tokensWanted: Int, now: UInt64) -> RateGrant {
        let wanted = max(0, tokensWanted)
        if isUnlimited { return .go(tokens: wanted) }
        if let fleet {
            switch fleet.take(tokensWanted: wanted) {
            case .go(let tokens): return .go(tokens: tokens)
            case .wait: return .wait(nanos: Self.fleetPollNanos)
            case .unshared: break
            }
        }
        return state.withLock { state in
            recover(&state, now: now)
            let requestsShort = (state.requests?.available(now: now) ?? 1) < 1
            let needed = min(wanted, state.tokens?.capacity ?? Int.max)
            let tokensShort = (state.tokens?.available(now: now) ?? Int.max) < needed
            guard !requestsShort && !tokensShort else {
                // Both are needed: the longer wait.
                let requestsWait = requestsShort ? state.requests?.nanosUntil(1, now: now) ?? 0 : 0
                let tokensWait = tokensShort ? state.tokens?.nanosUntil(needed, now: now) ?? 0 : 0
                return .wait(nanos: max(requestsWait, tokensWait))
            }
            state.requests?.take(1, now: now)
            state.tokens?.take(needed, now: now)
            return .go(tokens: needed)
        }
    }

    /// The vendor answered a request over the rate (`ServiceAnswer.overRate`) at `now`: halves the rates in
    /// effect unless they were lowered less than `lowerSpacingNanos` ago, and restarts the wait for recovery.
    public func overRate(now: UInt64) {
        if isUnlimited { return }
        fleet?.overRate()
        state.withLock { state in
            recover(&state, now: now)
            state.calmSince = max(state.calmSince, now)
            if let last = state.lastLowered, now < last || now - last < lowerSpacingNanos { return }
            state.lastLowered = now
            if let configured = requestsPerSecond, let rate = state.requests?.rate {
                state.requests?.setRate(max(Self.lowestRate(configured), rate / 2), now: now)
            }
            if let configured = tokensPerSecond, let rate = state.tokens?.rate {
                state.tokens?.setRate(max(Self.lowestRate(configured), rate / 2), now: now)
            }
        }
    }

    /// The requests per second in effect as of the last grant or over-rate answer (nil: no limit).
    public var effectiveRequestsPerSecond: Int? { state.withLock { $0.requests?.rate } }
    /// The tokens per second in effect as of the last grant or over-rate answer (nil: no limit).
    public var effectiveTokensPerSecond: Int? { state.withLock { $0.tokens?.rate } }

    /// The rates in effect at `now`, with the steps back up due by then taken (for metrics between grants).
    public func effectiveRates(now: UInt64) -> (requestsPerSecond: Int?, tokensPerSecond: Int?) {
        if isUnlimited { return (nil, nil) }
        return state.withLock { state in
            recover(&state, now: now)
            return (state.requests?.rate, state.tokens?.rate)
        }
    }

    /// The lowest rate an over-rate answer leaves: a sixteenth of the configured one, at least 1 a second.
    static func lowestRate(_ configured: Int) -> Int { max(1, configured / 16) }

    /// Doubles the rates in effect once for each `recoveryNanos` since the last over-rate answer or step, up to
    /// the configured rates. A step at a time (at most 63 of them), each at the time it was due, so a quiet
    /// spell found late is every step it spans, and the buckets filled at the rate of each part of it.
    private func recover(_ state: inout State, now: UInt64) {
        while now >= state.calmSince && now - state.calmSince >= recoveryNanos {
            let due = state.calmSince + recoveryNanos
            var raised = false
            if let configured = requestsPerSecond, let rate = state.requests?.rate, rate < configured {
                state.requests?.setRate(rate > configured / 2 ? configured : rate * 2, now: due)
                raised = true
            }
            if let configured = tokensPerSecond, let rate = state.tokens?.rate, rate < configured {
                state.tokens?.setRate(rate > configured / 2 ? configured : rate * 2, now: due)
                raised = true
            }
            guard raised else { return }
            state.calmSince = due
        }
    }
}
