/// One app's part of its fleet-wide rate limit on this worker: the permits this worker holds, what its lanes asked
/// for and did not get, and whether the fleet's budget in Redis can be reached.
///
/// The vendors count an app's rate across every sender (`requests_per_s`, `tokens_per_s`), so the budget lives in
/// Redis, one token bucket per app that every worker draws from. A call to Redis per request would put a round
/// trip in front of every send, so a worker takes permits in batches (`FleetRateRefiller`, a fiftieth of a
/// second's rate at a time, more when a waiting request needs more tokens) and its lanes spend them here without
/// leaving the process. Lanes run on threads of their own: the state is under a lock, and what a lane learns
/// from a `take` that comes up short is a wait, never a block.
///
/// While the budget cannot be reached (before the worker's first exchange with Redis, or after a failed one),
/// `isShared` is false and the lanes keep to the configured rate on their own (`AppRateLimit`'s local buckets):
/// a Redis outage must not stop the sends, and the vendor's over-rate answers still lower the rate.
public final class FleetRateShare: Sendable {
    /// The app's field in the registry and its key's tail in Redis: `<provider>:<topic>`.
    public let key: String
    /// The configured rates (nil: not limited), at least 1 when set.
    public let requestsPerSecond: Int?
    public let tokensPerSecond: Int?
    /// Rings the refiller when a lane comes up short or an over-rate answer arrives (nil: nobody listens).
    private let wake: @Sendable () -> Void

    private struct State {
        var requests = 0
        var tokens = 0
        /// The most tokens a request asked for and did not get since the last deposit (0: none waiting).
        var tokensWanted = 0
        /// A lane asked for a request and found none since the last deposit.
        var requestWanted = false
        /// Grants asked for since the refiller last looked.
        var asks = 0
        /// When the refiller last saw grants asked for (its clock, uptime nanoseconds).
        var lastAskSeen: UInt64 = 0
        var overRatePending = false
        var shared = false
        var failed = false
        /// The fleet's rates in effect (after over-rate halvings), as the last exchange reported them.
        var fleetRequestsPerSecond: Int?
        var fleetTokensPerSecond: Int?
    }

    private let state = Locked(State())

    public init(key: String, requestsPerSecond: Int?, tokensPerSecond: Int?, wake: @escaping @Sendable () -> Void = {}) {
        self.key = key
        self.requestsPerSecond = requestsPerSecond.map { max(1, $0) }
        self.tokensPerSecond = tokensPerSecond.map { max(1, $0) }
        self.wake = wake
    }

    /// Whether the lanes draw from the fleet's budget now (false: each worker keeps to the configured rate itself).
    public var isShared: Bool { state.withLock { $0.shared } }

    /// The fleet's rates in effect, as the last exchange with Redis reported them (nil: not limited, or not known).
    public var fleetRates: (requestsPerSecond: Int?, tokensPerSecond: Int?) {
        state.withLock { ($0.fleetRequestsPerSecond, $0.fleetTokensPerSecond) }
    }

    /// A lane's grant: one request carrying up to `tokensWanted` tokens, from the permits held. A request waits
    /// until the permits cover its whole batch, capped at one second of the fleet's token rate (what the bucket can
    /// hold). `.wait`: the refiller has been rung, ask again shortly; `.unshared`: the lane keeps to the configured
    /// rate on its own.
    public func take(tokensWanted: Int) -> FleetRateTake {
        let (answer, ring) = state.withLock { state -> (FleetRateTake, Bool) in
            guard state.shared else { return (.unshared, false) }
            state.asks &+= 1
            let cap = state.fleetTokensPerSecond ?? tokensPerSecond ?? Int.max
            let needed = min(max(0, tokensWanted), max(1, cap))
            let requestsShort = requestsPerSecond != nil && state.requests < 1
            let tokensShort = tokensPerSecond != nil && state.tokens < needed
            guard !requestsShort && !tokensShort else {
                let first = !state.requestWanted && state.tokensWanted == 0
                if requestsShort { state.requestWanted = true }
                if tokensShort { state.tokensWanted = max(state.tokensWanted, needed) }
                return (.wait, first)
            }
            if requestsPerSecond != nil { state.requests -= 1 }
            if tokensPerSecond != nil { state.tokens -= needed }
            return (.go(tokens: needed), false)
        }
        if ring { wake() }
        return answer
    }

    /// The vendor answered over the rate: the next exchange lowers the fleet's rate, and the permits held are given up
    /// (they were counted at the rate the vendor just refused).
    public func overRate() {
        state.withLock { state in
            state.overRatePending = true
            state.requests = 0
            state.tokens = 0
        }
        wake()
    }

    /// What the refiller should ask the fleet's budget for at `now` (its clock, uptime nanoseconds), nil for
    /// nothing. When no lane asked for a grant in the last second, the permits held are given up: a batch taken for
    /// a burst that ended must not be spent a minute later on top of the fleet's rate.
    public func wanted(now: UInt64) -> FleetRateRequest? {
        state.withLock { state in
            let asked = state.asks
            state.asks = 0
            if asked > 0 {
                state.lastAskSeen = now
            } else if now < state.lastAskSeen || now - state.lastAskSeen >= Self.idleNanos {
                state.requests = 0
                state.tokens = 0
            }
            var request = FleetRateRequest(requests: 0, tokens: 0, overRate: state.overRatePending)
            if let configured = requestsPerSecond {
                let batch = Self.batch(state.fleetRequestsPerSecond ?? configured)
                // A lane short, or what is held down to half a batch while lanes ask: the next batch before it is missed.
                if state.requestWanted || (asked > 0 && state.requests * 2 < batch) {
                    request.requests = max(1, batch - state.requests)
                }
            }
            if let configured = tokensPerSecond {
                let rate = state.fleetTokensPerSecond ?? configured
                let batch = min(rate, max(Self.batch(rate), state.tokensWanted))
                if state.tokensWanted > state.tokens || (asked > 0 && state.tokens * 2 < batch) {
                    request.tokens = max(1, batch - state.tokens)
                }
            }
            guard request.requests > 0 || request.tokens > 0 || request.overRate else { return nil }
            return request
        }
    }

    /// What an exchange granted (the over-rate it carried now counted fleet-wide), with the fleet's rates in
    /// effect. From now on the lanes draw from the fleet's budget.
    public func deposit(_ grant: FleetRateGrant, carriedOverRate: Bool) {
        state.withLock { state in
            state.shared = true
            state.failed = false
            if carriedOverRate { state.overRatePending = false }
            state.requests = min(Int.max / 2, state.requests + max(0, grant.requests))
            state.tokens = min(Int.max / 2, state.tokens + max(0, grant.tokens))
            state.fleetRequestsPerSecond = requestsPerSecond == nil ? nil : grant.requestsPerSecond.map { max(1, $0) }
            state.fleetTokensPerSecond = tokensPerSecond == nil ? nil : grant.tokensPerSecond.map { max(1, $0) }
            if state.requests >= 1 { state.requestWanted = false }
            if state.tokens >= state.tokensWanted { state.tokensWanted = 0 }
        }
    }

    /// An exchange failed: the lanes keep to the configured rate on their own until one succeeds. Returns whether
    /// this is news (the share was shared, or never failed before), for a log line per change rather than per try.
    @discardableResult
    public func unreachable() -> Bool {
        state.withLock { state in
            let news = state.shared || !state.failed
            state.failed = true
            state.shared = false
            state.requests = 0
            state.tokens = 0
            state.requestWanted = false
            state.tokensWanted = 0
            return news
        }
    }

    /// No grant asked for this long: the permits held are given up.
    static let idleNanos: UInt64 = 1_000_000_000

    /// The permits a batch takes: a fiftieth of a second's rate (at least 1), so that what a worker holds and does
    /// not spend at once is a small part of the app's rate however many workers hold some.
    static func batch(_ rate: Int) -> Int { max(1, rate / 50) }
}

/// What a lane's `FleetRateShare.take` gives.
public enum FleetRateTake: Equatable, Sendable {
    /// One request may start now with this many tokens.
    case go(tokens: Int)
    /// Not yet: the permits are on their way.
    case wait
    /// The fleet's budget cannot be reached: the lane keeps to the configured rate on its own.
    case unshared
}

/// What a worker asks an app's fleet budget for in one exchange.
public struct FleetRateRequest: Equatable, Sendable {
    public var requests: Int
    public var tokens: Int
    /// The vendor answered over the rate since the last exchange: the fleet's rate is lowered.
    public var overRate: Bool

    public init(requests: Int, tokens: Int, overRate: Bool) {
        self.requests = requests
        self.tokens = tokens
        self.overRate = overRate
    }
}

/// What an exchange with an app's fleet budget gave.
public struct FleetRateGrant: Equatable, Sendable {
    public var requests: Int
    public var tokens: Int
    /// How long until the budget holds what was asked for, when it gave less (0: it gave all).
    public var waitMillis: Int
    /// The fleet's rates in effect after this exchange (nil: not limited).
    public var requestsPerSecond: Int?
    public var tokensPerSecond: Int?

    public init(requests: Int, tokens: Int, waitMillis: Int, requestsPerSecond: Int?, tokensPerSecond: Int?) {
        self.requests = requests
        self.tokens = tokens
        self.waitMillis = waitMillis
        self.requestsPerSecond = requestsPerSecond
        self.tokensPerSecond = tokensPerSecond
    }
}
