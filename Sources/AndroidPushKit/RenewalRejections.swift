/// docs/vendors.md: an expired or rejected credential is renewed and the request sent again without spending an attempt;
/// "the same again at once pauses the app". The scheduler renews and resends, but after its free resends it spends
/// attempts and finally dead-letters: a wrong app id (a token of another client: 80200001) or a key of another
/// project would end every message of the app as a dead letter. So each lane's service remembers:
///
/// 1. a rejection of generation g: renewed and resent (`renewing(after: g)`);
/// 2. a newer generation rejected too, before any answer showed the credential accepted: the renewed credential is
///    refused as well, so the app pauses (`refusing`): the next `authorization()` says so once, which starts the
///    scheduler's credential pause (nothing dead-lettered, readiness false, the requests held);
/// 3. while refusing, a rejection answers the pause's probe: the classifier makes it a refusal (the pause doubles,
///    up to its longest) instead of another resend, and the service renews the credential for the next probe;
/// 4. any answer showing the credential accepted ends it.
///
/// A value type, confined to one lane's thread (each lane has its own service).

public struct RenewalRejections: Equatable, Sendable {
    public enum State: Equatable, Sendable {
        case accepted
        /// The credential of this generation was rejected and renewed.
        case renewing(after: Int)
        /// The renewed credential was rejected too: the app is paused until a request is accepted.
        case refusing
    }

    public private(set) var state = State.accepted

    /// `authorization()` owes one refusal, to start the pause.
    public private(set) var pauseOwed = false
    /// Times a renewed credential was rejected again (tests, logs).
    public private(set) var refusals = 0

    public init() {}

    public var isRefusing: Bool { state == .refusing }

    /// The scheduler renews the credential of `generation` after a rejection. True when this is a renewed
    /// credential rejected again: the app is to pause.
    public mutating func rejected(generation: Int) -> Bool {
        switch state {
        case .accepted:
            state = .renewing(after: generation)
            return false
        case .renewing(let last) where generation > last:
            state = .refusing
            pauseOwed = true
            refusals += 1
            return true
        case .renewing, .refusing:
            return false  // another request of a generation already reported, or a probe the classifier refused
        }
    }

    /// Whether `authorization()` must refuse now (once per pause begun).
    public mutating func takeOwedPause() -> Bool {
        defer { pauseOwed = false }
        return pauseOwed
    }

    /// An answer showed the credential accepted: a later rejection is a first one again.
    public mutating func accepted() {
        state = .accepted
        pauseOwed = false
    }
}
