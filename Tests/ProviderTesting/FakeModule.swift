import ProviderKit
import PushCore

/// The smallest provider module, for the core's tests and as the worked example of the provider kit
/// (docs/architecture.md, "The provider kit"): a `fake` block with an endpoint and apps, the common Android message
/// rules, lanes of `FakeListService` (lists of up to `batch_limit` tokens, answered as `FakeListService` reads them).
public struct FakeModule: ProviderModule {
    public struct Settings: Sendable, Equatable {
        public var endpoint = "https://fake.invalid"
        public var caFile = ""
        public var connections = 1
        public var maxConnections = 4
        public var requestTimeoutMillis = 10_000
        public var apps: [App] = []
        public init() {}
    }

    public struct App: Sendable, Equatable {
        public var topic = ""
        public var batchLimit = 1000
        public init(topic: String = "", batchLimit: Int = 1000) {
            self.topic = topic
            self.batchLimit = batchLimit
        }
    }

    /// The block, declared once: what the configuration accepts, how it is read and shown.
    public static let block = SettingsBlock<Settings, App>(
        name: "fake",
        keys: [.endpoint(\.endpoint), .caFile(\.caFile), .connections(\.connections),
               .maxConnections(\.maxConnections, connections: \.connections), .requestTimeout(\.requestTimeoutMillis)],
        appKeys: [.text("topic", \.topic), .number("batch_limit", \.batchLimit, min: 1, max: 1000)],
        settings: { Settings() }, app: { App() }, apps: \.apps, topic: \.topic)

    /// Its name, message rules (the common Android shape, 1,000 tokens a request) and keys.
    public static let description = ProviderDescription(
        name: "fake", messageRules: AndroidVendorRules(maxPayloadBytes: 4096, tokensPerRequest: 1000), block: block)

    public let settings: Settings

    public init(settings: Settings) { self.settings = settings }

    public init(block: ConfigurationBlock) throws { settings = try Self.block.read(block) }

    public var summaryLines: [String] { Self.block.summaryLines(settings) }
    public var topics: [String] { settings.apps.map(\.topic) }
    public var caFile: String { settings.caFile }

    /// Each app: its lanes, each with its share of the connections and a service of its own.
    public func makeLanes(_ context: LaneContext) throws -> [ProviderAppLanes] {
        try settings.apps.map { app in
            let count = context.laneCount(connections: settings.connections)
            return ProviderAppLanes(app: app.topic, lanes: try context.lanes(count: count, settings: { lane in
                var transport = TransportSettings(baseURL: settings.endpoint)
                transport.caFile = settings.caFile
                transport.driver = .nghttp2
                transport.streamsBeforeFirstSuccess = nil
                transport.requestTimeoutMillis = settings.requestTimeoutMillis
                transport.share(connections: settings.connections, maxConnections: settings.maxConnections, lanes: count, lane: lane)
                transport.app = app.topic
                return transport
            }, service: { FakeListService(batchLimit: app.batchLimit) }))
        }
    }

    /// Nothing to prove: the fake service takes any request.
    public func checkCredentials() -> [(app: String, problem: String?, detail: String)] {
        settings.apps.map { ($0.topic, nil, "no credential") }
    }
}
