/// An app whose credential APNs refuses (`InvalidProviderToken`, `BadCertificate`, a revoked key) is paused
/// rather than dead-lettered (docs/operations.md): no retry of a notification can fix the credential, and every
/// request of the app would fail alike. Its requests wait in the transport without spending attempts; once a
/// pause has passed, a single request goes out as a probe; a refused probe doubles the pause (up to
/// `longestNanos`), any HTTP answer that is not a credential refusal ends it. Meanwhile the pipeline's
/// in-flight bound stops the collector claiming, so the app's backlog waits in Redis.
///
/// A value type confined to the transport thread; times are uptime nanoseconds.
struct CredentialPause {
    private(set) var paused = false
    /// The probe is out: nothing else starts until it is answered.
    private(set) var probing = false
    private(set) var resumeAt: UInt64 = 0
    private(set) var lengthNanos: UInt64
    let firstNanos: UInt64
    let longestNanos: UInt64

    init(firstNanos: UInt64 = 1_000_000_000, longestNanos: UInt64 = 60_000_000_000) {
        self.firstNanos = firstNanos
        self.longestNanos = max(firstNanos, longestNanos)
        lengthNanos = firstNanos
    }

    /// A request was refused for the credential. Returns true when this starts a pause.
    mutating func refused(now: UInt64) -> Bool {
        if !paused {
            paused = true
            lengthNanos = firstNanos
            resumeAt = now &+ lengthNanos
            return true
        }
        if probing {
            probing = false
            lengthNanos = min(lengthNanos &* 2, longestNanos)
            resumeAt = now &+ lengthNanos
        }
        // Otherwise a request that was already in flight when the pause began: nothing changes.
        return false
    }

    /// Any other outcome of a request. An HTTP status means APNs authenticated the request: the pause ends
    /// (returns true). Without one (connection error, timeout) a probe proved nothing and is sent again later.
    mutating func answered(status: Int?, now: UInt64) -> Bool {
        guard paused else { return false }
        if let status, status > 0 {
            paused = false
            probing = false
            lengthNanos = firstNanos
            return true
        }
        if probing {
            probing = false
            resumeAt = now &+ lengthNanos
        }
        return false
    }

    /// How many requests may start now, with `active` in flight: unlimited unless paused; one probe once the
    /// pause has passed and the requests in flight when it began have come back.
    func allowance(now: UInt64, active: Int) -> Int {
        guard paused else { return Int.max }
        return !probing && active == 0 && now >= resumeAt ? 1 : 0
    }

    mutating func probeStarted() {
        if paused { probing = true }
    }

    /// How long the transport may sleep before the pause lets a probe out (nil: not waiting on a pause).
    func waitNanos(now: UInt64) -> UInt64? {
        guard paused, !probing else { return nil }
        return resumeAt > now ? resumeAt - now : 0
    }
}
