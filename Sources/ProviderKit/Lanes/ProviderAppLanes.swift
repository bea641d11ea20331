/// One app's lanes, as a module describes them, and what the module's own threads for the app (a token cache)
/// need: `started` is told the running lanes (to wake them), `shutdown` waits for those threads to end after the
/// lanes (the worker's end), `stop` only tells them to (a start that failed part-way).
public struct ProviderAppLanes {
    public var app: String
    public var lanes: [LanePlan]
    /// Other apps whose messages these lanes send too (apps that share one credential and its connections).
    public var alsoServes: [String] = []
    public var started: (([any LaneWaking]) -> Void)?
    public var shutdown: (@Sendable () async -> Void)?
    public var stop: (@Sendable () -> Void)?

    public init(app: String, lanes: [LanePlan], started: (([any LaneWaking]) -> Void)? = nil,
                shutdown: (@Sendable () async -> Void)? = nil, stop: (@Sendable () -> Void)? = nil) {
        self.app = app
        self.lanes = lanes
        self.started = started
        self.shutdown = shutdown
        self.stop = stop
    }
}
