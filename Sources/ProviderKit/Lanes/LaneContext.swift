import Logging
import PushCore

/// What a module needs from the worker to describe its apps' lanes: the worker's logger and readiness (for a token
/// cache to report a credential that cannot be had), and its cores (for how many lanes an app gets). What the lanes
/// share beyond that (the retry rules, the ownership fence, the wait board, where outcomes go) the `Pusher` adds
/// when it starts them.
public struct LaneContext: Sendable {
    public var logger: Logger
    public var readiness: Readiness?
    /// The worker's cores, for how many lanes an app gets.
    public var cores: Int

    public init(logger: Logger, readiness: Readiness?, cores: Int) {
        self.logger = logger
        self.readiness = readiness
        self.cores = cores
    }

    /// How many lanes an app of a provider module gets: one per two cores, at most its connections, at least one.
    public func laneCount(connections: Int) -> Int { max(1, min(connections, cores / 2)) }

    /// `count` lanes of one app: lane `n` runs with `settings(n)` and a service of its own, `service()` (a service
    /// is used from its lane's thread alone). A service that cannot be made (a secret file missing) is an error
    /// here, before anything starts.
    public func lanes(count: Int, settings: (Int) -> TransportSettings, service: () throws -> any PushService) throws -> [LanePlan] {
        try (0..<max(1, count)).map { lane in LanePlan(settings: settings(lane), service: try service()) }
    }
}
