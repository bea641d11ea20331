import PushCore

/// The life of one service account's access token, as `AccessTokenCache` drives it: a value type with no
/// clock and no lock of its own. Each transition is told the time (seconds on the cache's clock), so a test
/// walks through it with a `ManualTransportClock` and no waiting.
///
/// (`AccessTokenState` is what callers are told; this is what the renewal thread knows, and it says the former
/// through `view(now:)` and `published`.)
struct AccessTokenLife {
    enum State: Equatable {
        /// No token in use; the next request is due at `askAt` (at once for the first token or after a
        /// rejection, after a backoff once a request failed or the token expired meanwhile).
        case waiting(reason: String, askAt: Double)
        /// No token in use and a request is out.
        case fetching(reason: String)
        /// A token in use, renewed from `renewAt` (its renewal moment, or a backoff after a failed renewal).
        case valid(AccessToken, renewAt: Double)
        /// A token in use while a request for its successor is out.
        case renewing(AccessToken)
        /// The endpoint refused the key: asked again from `retryAt`.
        case refused(reason: String, retryAt: Double)
        /// Asking again after a refusal; callers still hear the refusal.
        case retryingRefused(reason: String)
    }

    /// What the renewal thread does next.
    enum Step: Equatable {
        /// Send a request now (its start, which times the token's life).
        case ask(startedAt: Double)
        /// The token in use expired while renewals failed: callers wait from now on (say it).
        case expired(AccessTokenState)
        /// Nothing is due before `until` (infinity: a request is out, its answer decides).
        case wait(until: Double)
    }

    static let firstReason = "the first access token is being requested"
    static let rejectedReason = "the access token was rejected (401); a new one is being requested"

    private(set) var state = State.waiting(reason: firstReason, askAt: 0)
    /// When the last request started: never two within `AccessTokenRenewal.minimumInterval`.
    private(set) var lastAttempt = -Double.infinity
    /// Why the last request got no token (said when the token in use expires meanwhile).
    private(set) var lastFailure: String?
    /// Failed requests in a row (the backoff's exponent).
    private(set) var failures = 0
    private(set) var generation = 0
    private(set) var requests = 0
    /// When the last (up to 16) requests started.
    private(set) var recentStarts: [Double] = []

    /// What was last told (the token in use as if it never expired): a change of it is reported.
    var published: AccessTokenState {
        switch state {
        case .waiting(let reason, _), .fetching(let reason): return .unavailable(reason: reason)
        case .valid(let token, _), .renewing(let token): return .ready(token)
        case .refused(let reason, _), .retryingRefused(let reason): return .refused(reason: reason)
        }
    }

    /// What a caller is told at `now`: a token past its expiry is not used, even before the thread notices.
    func view(now: Double) -> AccessTokenState {
        if let token = published.token, now >= token.expiresAt { return .unavailable(reason: expiredReason) }
        return published
    }

    var expiredReason: String {
        "the access token expired before a new one could be had" + (lastFailure.map { " (\($0))" } ?? "")
    }

    /// The renewal thread, between requests: a request is due (and a second has passed since the last), the
    /// token in use expired, or neither yet.
    mutating func next(now: Double) -> Step {
        let due: Double
        switch state {
        case .fetching, .renewing, .retryingRefused:
            return .wait(until: .infinity)
        case .valid(let token, let renewAt):
            if now >= token.expiresAt {
                // The pending attempt (a backoff) stays as it was.
                state = .waiting(reason: expiredReason, askAt: renewAt)
                return .expired(published)
            }
            due = max(renewAt, lastAttempt + AccessTokenRenewal.minimumInterval)
            if now < due { return .wait(until: min(due, token.expiresAt)) }
            state = .renewing(token)
        case .waiting(let reason, let askAt):
            due = max(askAt, lastAttempt + AccessTokenRenewal.minimumInterval)
            if now < due { return .wait(until: due) }
            state = .fetching(reason: reason)
        case .refused(let reason, let retryAt):
            due = max(retryAt, lastAttempt + AccessTokenRenewal.minimumInterval)
            if now < due { return .wait(until: due) }
            state = .retryingRefused(reason: reason)
        }
        lastAttempt = now
        requests += 1
        if recentStarts.count == 16 { recentStarts.removeFirst() }
        recentStarts.append(now)
        return .ask(startedAt: now)
    }

    /// A token was granted to the request started at `startedAt`: its life is timed from the request, not the
    /// answer, since it began no later than that.
    mutating func granted(bearer: Secret, expiresIn: Int64, startedAt: Double) {
        generation += 1
        failures = 0
        lastFailure = nil
        let token = AccessToken(bearer: bearer, expiresIn: expiresIn, generation: generation,
                                expiresAt: startedAt + Double(expiresIn))
        state = .valid(token, renewAt: startedAt + AccessTokenRenewal.renewAfter(expiresIn: expiresIn))
    }

    /// The endpoint could not be had (down, a 5xx): asked again after `backoff(failures)` seconds, which this
    /// returns. A token still valid stays in use meanwhile; otherwise callers wait, and are told why.
    mutating func unavailable(reason: String, now: Double, backoff: (Int) -> Double) -> Double {
        failures += 1
        lastFailure = reason
        let delay = backoff(failures)
        if case .renewing(let token) = state, now < token.expiresAt {
            state = .valid(token, renewAt: now + delay)
        } else {
            let said = reason.hasSuffix(".") ? String(reason.dropLast()) : reason
            state = .waiting(reason: "\(said); asking again in \(Int(delay.rounded(.up))) s", askAt: now + delay)
        }
        return delay
    }

    /// The endpoint refused the key: callers are told so, whatever token was in use, until a token is granted;
    /// asked again after `retryAfter` seconds.
    mutating func refused(reason: String, now: Double, retryAfter: Double) {
        failures += 1
        lastFailure = reason
        state = .refused(reason: reason, retryAt: now + retryAfter)
    }

    /// A server rejected the token of `generation`. Unless a newer token exists it is dropped and renewed now
    /// (the one-second floor still applies), or by the request already out. Returns whether it was dropped:
    /// of many callers reporting the same token, only the first.
    mutating func rejected(generation: Int, now: Double) -> Bool {
        switch state {
        case .valid(let token, _) where token.generation == generation:
            state = .waiting(reason: Self.rejectedReason, askAt: now)
            return true
        case .renewing(let token) where token.generation == generation:
            state = .fetching(reason: Self.rejectedReason)
            return true
        default:
            return false
        }
    }
}
