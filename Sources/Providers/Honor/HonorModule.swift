import ProviderKit
import PushCore

/// Honor Push as the worker builds it (`ProviderModule`): its name and message rules, its `honor` block, its apps'
/// lanes (an access token shared by each app's lanes) and its credential check. The worker names this type once,
/// in its list of providers.
public struct HonorModule: ProviderModule {
    /// The `honor` block, declared once (defaults: `HonorSettings`, `HonorApp`).
    public static let block = SettingsBlock<HonorSettings, HonorApp>(
        name: "honor",
        keys: [.endpoint(\.endpoint), .httpsURL("token_uri", \.tokenURI, allowPath: true), .caFile(\.caFile),
               .connections(\.connections), .maxConnections(\.maxConnections, connections: \.connections),
               .requestTimeout(\.requestTimeoutMillis)],
        appKeys: [.text("topic", \.topic), .text("app_id", \.appID), .text("client_id", \.clientID),
                  .secretFile("client_secret_file", \.clientSecretFile), .text("importance", \.importance),
                  .text("system_importance", \.systemImportance), .text("bulk_importance", \.bulkImportance),
                  .number("tokens_per_s", \.tokensPerSecond, min: 1), .httpsURL("endpoint", \.endpoint, empty: .hidden)],
        settings: { HonorSettings() }, app: { HonorApp(topic: "") },
        apps: \.apps, topic: \.topic,
        finishApp: { app, key in
            guard !app.appID.isEmpty, !app.clientID.isEmpty, !app.clientSecretFile.isEmpty else {
                throw ConfigurationError.invalid(key: key, reason: "needs app_id, client_id and client_secret_file")
            }
        })

    public static let description = ProviderDescription(
        name: "honor",
        // Honor publishes neither a size cap nor a list limit: the 4,096 bytes and 1,000 tokens of the API Honor's
        // grew out of are taken.
        messageRules: AndroidVendorRules(maxPayloadBytes: 4096, tokensPerRequest: 1000),
        block: block,
        // Without a published code table, only an answer the service gave for the message itself is permanent.
        permanentReasons: ["400"])

    public let settings: HonorSettings

    public init(settings: HonorSettings) {
        self.settings = settings
    }

    public init(block: ConfigurationBlock) throws {
        settings = try Self.block.read(block)
    }

    public var summaryLines: [String] { Self.block.summaryLines(settings) }

    /// An app without a chat importance: Honor counts its chat as marketing.
    public var warnings: [String] {
        settings.apps.enumerated().compactMap { index, app in
            guard app.importance.isEmpty else { return nil }
            return "honor.apps.\(index) (\(app.topic)): no chat class (importance is empty): Honor counts the app's chat "
                + "pushes as marketing, capped at a few a day per device; set NORMAL (service and communication)"
        }
    }

    public var topics: [String] { settings.apps.map(\.topic) }

    public var caFile: String { settings.caFile }

    /// Each app: its client secret read (a startup error names the file), its access token's renewal started,
    /// then one lane per two cores (at most its connections) sharing the app's rate and record of deliveries.
    public func makeLanes(_ context: LaneContext) throws -> [ProviderAppLanes] {
        let metrics = ServiceMetrics.of(Self.provider)
        var made: [ProviderAppLanes] = []
        do {
            for app in settings.apps {
                let credentials = try ClientCredentials.load(clientID: app.clientID, clientIDKey: "client_id", secretFile: app.clientSecretFile)
                let readiness = AccessTokenReadiness(readiness: context.readiness, app: app.topic, service: "Honor")
                metrics.registerAccessTokenSeries(app: app.topic)
                let cache = HonorAccessTokens.cache(
                    credentials: credentials, endpoint: endpoint, name: app.topic,
                    onExchange: { metrics.accessTokenRenewal(app: app.topic, ok: $0) }, onChange: readiness.changed)
                let count = context.laneCount(connections: settings.connections)
                let rate = HonorLanes.rateLimit(for: app)
                let deliveries = AppDeliveryRecord.of(provider: Self.provider, app: app.topic)
                let lanes = try context.lanes(
                    count: count,
                    settings: { HonorLanes.transportSettings(for: app, settings: settings, rateLimit: rate, lanes: count, lane: $0) },
                    service: { HonorService(app: app, tokens: cache, deliveries: deliveries, metrics: metrics, logger: context.logger) })
                made.append(ProviderAppLanes(app: app.topic, lanes: lanes, started: { cache.wakeOnChange($0) },
                                             shutdown: { @Sendable in await cache.shutdown() }, stop: { @Sendable in cache.stop() }))
            }
        } catch {
            made.forEach { $0.stop?() }
            throw error
        }
        return made
    }

    private var endpoint: TokenEndpoint {
        TokenEndpoint(uri: settings.tokenURI, caFile: settings.caFile, timeoutMillis: settings.requestTimeoutMillis)
    }

    /// Each app's client secret read and one access token asked for (a blocking exchange: `check-config` is a tool,
    /// not the worker's pool).
    public func checkCredentials() -> [(app: String, problem: String?, detail: String)] {
        settings.apps.map { app in
            do {
                let credentials = try ClientCredentials.load(clientID: app.clientID, clientIDKey: "client_id", secretFile: app.clientSecretFile)
                switch endpoint.exchange(form: credentials.grantForm) {
                case .granted(_, let expiresIn):
                    return (app.topic, nil, "an access token granted by \(settings.tokenURI) (expires in \(expiresIn) s)")
                case .refused(let reason):
                    return (app.topic, "\(settings.tokenURI) refused the client credentials: \(reason)", "")
                case .unavailable(let reason):
                    return (app.topic, "\(settings.tokenURI) could not be asked: \(reason)", "")
                }
            } catch {
                return (app.topic, "\(error)", "")
            }
        }
    }
}
