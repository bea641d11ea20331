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
    /// Loads each app's credential (an error names the app and the file, never a secret), starts what the app's
    /// credential needs of its own (a token cache) and describes its lanes, which the `Pusher` starts. On an error,
    /// what it started for earlier apps of its own is stopped before it throws.
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
