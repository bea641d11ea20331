import PushCore

/// One JWT per key, shared by every connection and request of this process. It is renewed after
/// `refreshAfter` (50 minutes by default, before APNs' one-hour limit), and never sooner than
/// `minimumAge` (20 minutes) after the last one, not even when APNs says ExpiredProviderToken: renewing
/// more often gets TooManyProviderTokenUpdates and an unusable connection.
public final class ProviderToken: Sendable {
    public struct Current: Sendable, Equatable {
        public var bearer: String
        public var issuedAt: Int64
        /// Bumped on each renewal, so request headers built for an older token are rebuilt.
        public var generation: Int
    }

    private let signer: JWTSigner
    private let refreshAfter: Int64
    private let minimumAge: Int64
    private let clock: @Sendable () -> Int64
    private let state: Locked<Current?>
    /// The `app` label of `push_provider_token_renewals_total`.
    private let app: String

    public init(signer: JWTSigner, app: String = "", refreshAfterSeconds: Int64 = 50 * 60, minimumAgeSeconds: Int64 = 20 * 60,
                clock: @escaping @Sendable () -> Int64 = { WallClock.nowSeconds() }) {
        self.signer = signer
        self.refreshAfter = refreshAfterSeconds
        self.minimumAge = minimumAgeSeconds
        self.clock = clock
        self.state = Locked(nil)
        self.app = app
    }

    /// The token to use now; issues the first one lazily and renews it when it is old.
    public func current() throws -> Current {
        try state.withLock { current in
            let now = clock()
            if let token = current, now - token.issuedAt < refreshAfter { return token }
            let fresh = Current(bearer: try signer.token(issuedAt: now), issuedAt: now,
                                generation: (current?.generation ?? 0) + 1)
            current = fresh
            PushMetrics.shared.providerTokenRenewed(app: app)
            return fresh
        }
    }

    /// APNs rejected `generation` as expired. Renews only if nobody already did and the 20-minute rule
    /// allows it; returns whether a new token exists now.
    @discardableResult
    public func expired(generation: Int) throws -> Bool {
        try state.withLock { current in
            let now = clock()
            guard let token = current else { return false }
            if token.generation != generation { return true }
            guard now - token.issuedAt >= minimumAge else { return false }
            current = Current(bearer: try signer.token(issuedAt: now), issuedAt: now, generation: token.generation + 1)
            PushMetrics.shared.providerTokenRenewed(app: app)
            return true
        }
    }
}
