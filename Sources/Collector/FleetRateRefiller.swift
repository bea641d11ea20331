import Logging
import PushCore
import QueueProtocol
import RedisClient

/// Keeps this worker's fleet rate shares (`FleetRateShares`) supplied with permits from the apps' budgets in Redis
/// (`FleetRateBudget`), so that every worker together keeps an app to the rate its vendor counts.
///
/// A pass looks at every share: what its lanes came up short of, or what keeps a batch ahead of lanes that are
/// sending, is asked for in one script call per app; an over-rate answer since the last pass rides along and lowers
/// the fleet's rate. Passes run when a lane rings (it found no permit) and on a timer: every few milliseconds while
/// lanes are sending (sooner when the budget said when it will have the batch), once a second otherwise, when a
/// share that could not reach Redis is tried again. A failed call puts the share back on the configured rate per
/// worker (`FleetRateShare.unreachable`) until a call succeeds.
public struct FleetRateRefiller: Sendable {
    let budget: FleetRateBudget
    let shares: FleetRateShares
    let logger: Logger
    /// The pass interval while lanes are sending: a fiftieth of a second's rate is a batch, so a pass every 5 ms
    /// keeps the next one coming before the lanes have spent the last.
    static let busyInterval = Duration.milliseconds(5)
    static let idleInterval = Duration.seconds(1)

    public init(connection: any RedisCommands, keys: RedisKeys, shares: FleetRateShares = .process, logger: Logger) {
        budget = FleetRateBudget(connection: connection, keys: keys)
        self.shares = shares
        self.logger = logger
    }

    /// One exchange per share asking for nothing: the shares that reach Redis draw from the fleet's budget from now on
    /// (the worker makes it before its lanes start, so that they do not begin with a second on their own).
    public func prepare() async {
        for share in shares.all { _ = await exchange(share, FleetRateRequest(requests: 0, tokens: 0, overRate: false)) }
    }

    /// Until cancelled (the worker's shutdown).
    public func run() async {
        let interval = Locked(Self.idleInterval)
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                while !Task.isCancelled {
                    guard (try? await Task.sleep(for: interval.withLock { $0 })) != nil else { return }
                    shares.ring()
                }
            }
            for await _ in shares.rings {
                let next = await pass()
                interval.withLock { $0 = next }
            }
            group.cancelAll()
        }
    }

    /// Looks at every share once; returns how soon the next pass is due.
    func pass() async -> Duration {
        let now = OwnershipLease.now()
        var next = Self.idleInterval
        for share in shares.all {
            guard share.isShared else {
                // Tried again each pass until Redis answers (a pass runs at least once a second).
                _ = await exchange(share, FleetRateRequest(requests: 0, tokens: 0, overRate: false))
                continue
            }
            guard let request = share.wanted(now: now) else { continue }
            guard let grant = await exchange(share, request) else { continue }
            let wait = grant.waitMillis > 0 ? Duration.milliseconds(min(100, grant.waitMillis)) : Self.busyInterval
            next = min(next, max(.milliseconds(1), wait))
        }
        return next
    }

    private func exchange(_ share: FleetRateShare, _ request: FleetRateRequest) async -> FleetRateGrant? {
        do {
            let grant = try await budget.take(request, share: share.key, requestsPerSecond: share.requestsPerSecond,
                                              tokensPerSecond: share.tokensPerSecond)
            if !share.isShared { logger.info("the app's rate is shared with the fleet through Redis", metadata: ["app": "\(share.key)"]) }
            share.deposit(grant, carriedOverRate: request.overRate)
            return grant
        } catch {
            if share.unreachable() && !Task.isCancelled {
                logger.notice("cannot reach the app's fleet rate budget; this worker keeps to the configured rate on its own until it can",
                              metadata: ["app": "\(share.key)", "error": "\(error)"])
            }
            return nil
        }
    }
}
