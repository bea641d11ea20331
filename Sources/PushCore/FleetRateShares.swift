/// The process's fleet-wide rate limits, one `FleetRateShare` per app, and the bell their lanes ring for the
/// refiller (`FleetRateRefiller`) when they come up short. The provider modules make the shares when they build an
/// app's lanes; the worker's refiller keeps them supplied from Redis.
public final class FleetRateShares: Sendable {
    /// The worker's: the one its provider modules and its refiller share.
    public static let process = FleetRateShares()

    private let shares = Locked([String: FleetRateShare]())
    private let bell: AsyncStream<Void>.Continuation
    /// Rings once for any number of rings since it was last heard: the refiller then looks at every share.
    public let rings: AsyncStream<Void>

    public init() {
        (rings, bell) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// The share of `app` of `provider` with these rates: the one already made when the rates are the same (every
    /// lane of the app draws from one), else a new one in its place.
    public func share(provider: PushProvider, app: String, requestsPerSecond: Int?, tokensPerSecond: Int?) -> FleetRateShare {
        share(key: "\(provider.rawValue):\(app)", requestsPerSecond: requestsPerSecond, tokensPerSecond: tokensPerSecond)
    }

    /// The share of the app whose key (`FleetRateShare.key`) is `key`.
    public func share(key: String, requestsPerSecond: Int?, tokensPerSecond: Int?) -> FleetRateShare {
        let bell = self.bell
        return shares.withLock { shares in
            if let made = shares[key], made.requestsPerSecond == requestsPerSecond.map({ max(1, $0) }),
               made.tokensPerSecond == tokensPerSecond.map({ max(1, $0) }) {
                return made
            }
            let made = FleetRateShare(key: key, requestsPerSecond: requestsPerSecond, tokensPerSecond: tokensPerSecond) {
                bell.yield()
            }
            shares[key] = made
            return made
        }
    }

    /// Every share, by `key`.
    public var all: [FleetRateShare] { shares.withLock { Array($0.values) } }

    /// Rings the bell (the refiller's own timer uses it too).
    public func ring() { bell.yield() }
}
