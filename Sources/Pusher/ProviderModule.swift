import Logging
import ProviderKit
import PushCore

/// A provider's configured apps as the `Pusher` starts them and `check-config` checks them: every provider, the
/// default one included. The scheduler and the `Pusher` know no provider beyond this interface.
public protocol ProviderApps: Sendable {
    /// The provider whose messages these apps send (`PushProvider.index` routes a job to them).
    static var provider: PushProvider { get }
    /// Its answers, retry reasons and per-app outcomes made at 0 before the first event.
    static var knownSeries: KnownSeries { get }
    /// The topics of its apps.
    var topics: [String] { get }
    /// Its block's `ca_file`: the CA that verifies the service's certificate ("" for the system's), which
    /// `check-config` proves readable.
    var caFile: String { get }
    /// Its block's effective settings as `check-config` prints them, a line each (`<name>.<key>: <value>`, an app a
    /// line): defaults included, every secret as `***`, the contents of no file.
    var summaryLines: [String] { get }
    /// What the configuration allows but a user would not want, a line each naming the key (an app without a chat
    /// class): logged at start and printed by `check-config` as warnings, never an error.
    var warnings: [String] { get }
    /// Loads each app's credential (an error names the app and the file, never a secret) and starts its lanes. On
    /// an error, what it started for earlier apps of its own is stopped before it throws.
    func makeLanes(_ context: LaneContext) throws -> [ProviderAppLanes]
    /// `check-config`: loads each app's credential and proves what can be proved without sending a
    /// notification (a key that signs, a token the endpoint grants). One entry per app; `problem` nil when it is
    /// fine, `detail` what was proved.
    func checkCredentials() -> [(app: String, problem: String?, detail: String)]
    /// The reader of the service's delivery reports for the apps that take them (`receipts.listen`), their secrets
    /// read now (an error names the app and the file, never a secret); nil when the module has none or no app is
    /// set up for them.
    func receiptReader() throws -> (any ReceiptReader)?
}

/// A provider module as the worker builds it (docs/architecture.md, "Providers"): everything one push service needs
/// (its message rules, its configuration block, its requests and answers, its credentials, its check) in a folder of
/// its own under `Sources/Providers`, behind this interface. The worker names each module once, in its list of
/// providers; the parser, the configuration, the metrics, the tools and the `Pusher` iterate over what is
/// registered and never name one. The default provider is a module too, registered as the default
/// (`PushProvider.registerDefault`).
public protocol ProviderModule: ProviderApps {
    /// Its name, message rules and configuration keys, registered (`PushProvider.register`) before the
    /// configuration or any message is read.
    static var description: ProviderDescription { get }
    /// Reads and checks the module's block of the configuration; a bad value is an error naming its key. An
    /// empty block (no apps) is a module that serves nothing.
    init(block: ConfigurationBlock) throws
}

extension ProviderApps {
    public var warnings: [String] { [] }
    public func receiptReader() throws -> (any ReceiptReader)? { nil }
}

extension ProviderModule {
    /// The module's provider, once registered.
    public static var provider: PushProvider { PushProvider.register(description) }

    /// Its known answers (`ProviderDescription.knownResponses`).
    public static var knownSeries: KnownSeries { KnownSeries(responses: description.knownResponses) }
}

/// What a module's lanes share with the rest of the worker.
public struct LaneContext: Sendable {
    public var retry: RetrySettings
    public var logger: Logger
    public var readiness: Readiness?
    public var lease: OwnershipLease
    public var waitBoard: AppWaitBoard?
    public var sink: @Sendable ([Resolution]) -> Void
    /// The worker's cores, for how many lanes an app gets.
    public var cores: Int
    /// The number of the module's first lane among all of the worker's lanes (`TransportSettings.boardLane`); its
    /// lanes take the numbers that follow, in the order it returns them.
    public var firstBoardLane = 0

    public init(retry: RetrySettings, logger: Logger, readiness: Readiness?, lease: OwnershipLease,
                waitBoard: AppWaitBoard?, sink: @escaping @Sendable ([Resolution]) -> Void, cores: Int) {
        self.retry = retry
        self.logger = logger
        self.readiness = readiness
        self.lease = lease
        self.waitBoard = waitBoard
        self.sink = sink
        self.cores = cores
    }
}

/// One app's lanes, as a module made them, and what ends the app's own threads (a token cache) after its lanes:
/// `shutdown` waits for them to end (the worker's end), `stop` only tells them to (a start that failed part-way).
public struct ProviderAppLanes: Sendable {
    public var app: String
    public var lanes: [Scheduler]
    /// Other apps whose messages these lanes send too (apps that share one credential and its connections).
    public var alsoServes: [String] = []
    public var shutdown: (@Sendable () async -> Void)?
    public var stop: (@Sendable () -> Void)?

    public init(app: String, lanes: [Scheduler], shutdown: (@Sendable () async -> Void)? = nil, stop: (@Sendable () -> Void)? = nil) {
        self.app = app
        self.lanes = lanes
        self.shutdown = shutdown
        self.stop = stop
    }

    /// Ends what these lanes and the app's own threads started: for a start that failed part-way.
    public func abort() {
        lanes.forEach { $0.abort() }
        stop?()
    }
}

extension LaneContext {
    /// How many lanes an app of a provider module gets: one per two cores, at most its connections, at least one.
    public func laneCount(connections: Int) -> Int { max(1, min(connections, cores / 2)) }

    /// Starts `count` lanes of one app, sharing `credential` and numbered on the wait board from `firstLane`: lane
    /// `n` runs with `settings(n)`, to which the worker's retry rules and wait board are added here, and a service of
    /// its own, `service()`. On an error the lanes already started are aborted before it is thrown.
    public func startLanes(count: Int, firstLane: Int, credential: CredentialState, settings: (Int) -> TransportSettings,
                           service: () throws -> any PushService) throws -> [Scheduler] {
        var lanes: [Scheduler] = []
        do {
            for lane in 0..<count {
                var transport = settings(lane)
                transport.retry = retry
                transport.waitBoard = waitBoard
                transport.boardLane = firstLane + lane
                lanes.append(try Scheduler(settings: transport, service: try service(), readiness: readiness, logger: logger,
                                           credential: credential, lease: lease, sink: sink))
            }
        } catch {
            lanes.forEach { $0.abort() }
            throw error
        }
        return lanes
    }
}
