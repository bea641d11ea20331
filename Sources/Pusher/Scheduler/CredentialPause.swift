/// An app whose credential the service refuses (`InvalidProviderToken`, `BadCertificate`, a revoked key) is paused
/// rather than dead-lettered (docs/operations.md): no retry of a notification can fix the credential, and every
/// request of the app would fail alike. Its requests wait in the transport without spending attempts; once a
/// pause has passed, a single request goes out as a probe; a refused probe doubles the pause (up to
/// `longestNanos`), any HTTP answer that is not a credential refusal ends it. Meanwhile the pipeline's
/// in-flight bound stops the collector claiming, so the app's backlog waits in Redis.
///
/// A state machine (`State`), a value type confined to the transport thread; times are uptime nanoseconds.
struct CredentialPause {
    enum State: Equatable {
        /// Not paused: everything may start.
        case sending
        /// Refused: nothing starts until `resumeAt`, then one probe. `lengthNanos`: this pause's length, which a
        /// refused probe doubles.
        case paused(resumeAt: UInt64, lengthNanos: UInt64)
        /// The probe is out: nothing else starts until it is answered.
        case probing(lengthNanos: UInt64)
    }

    private(set) var state = State.sending
    let firstNanos: UInt64
    let longestNanos: UInt64

    init(firstNanos: UInt64 = 1_000_000_000, longestNanos: UInt64 = 60_000_000_000) {
        self.firstNanos = firstNanos
        self.longestNanos = max(firstNanos, longestNanos)
    }

    var paused: Bool { state != .sending }

    /// When the pause lets a probe out (0 unless waiting for that).
    var resumeAt: UInt64 {
        if case .paused(let resumeAt, _) = state { return resumeAt }
        return 0
    }

    /// A request was refused for the credential. Returns true when this starts a pause.
    mutating func refused(now: UInt64) -> Bool {
        switch state {
        case .sending:
            state = .paused(resumeAt: now &+ firstNanos, lengthNanos: firstNanos)
            return true
        case .probing(let length):
            let doubled = min(length &* 2, longestNanos)
            state = .paused(resumeAt: now &+ doubled, lengthNanos: doubled)
            return false
        case .paused:
            // A request that was already in flight when the pause began: nothing changes.
            return false
        }
    }

    /// Any other outcome of a request. An HTTP status means the service authenticated the request: the pause ends
    /// (returns true). Without one (connection error, timeout) a probe proved nothing and is sent again later.
    mutating func answered(status: Int?, now: UInt64) -> Bool {
        switch state {
        case .sending:
            return false
        case .paused, .probing:
            if let status, status > 0 {
                state = .sending
                return true
            }
            if case .probing(let length) = state { state = .paused(resumeAt: now &+ length, lengthNanos: length) }
            return false
        }
    }

    /// How many requests may start now, with `active` in flight: unlimited unless paused; one probe once the
    /// pause has passed and the requests in flight when it began have come back.
    func allowance(now: UInt64, active: Int) -> Int {
        switch state {
        case .sending: return Int.max
        case .paused(let resumeAt, _): return active == 0 && now >= resumeAt ? 1 : 0
        case .probing: return 0
        }
    }

    /// A request went out while paused: it is the probe.
    mutating func probeStarted() {
        if case .paused(_, let length) = state { state = .probing(lengthNanos: length) }
    }

    /// How long the transport may sleep before the pause lets a probe out (nil: not waiting on a pause).
    func waitNanos(now: UInt64) -> UInt64? {
        guard case .paused(let resumeAt, _) = state else { return nil }
        return resumeAt > now ? resumeAt - now : 0
    }
}
