import AndroidPushKit
import ProviderKit
import PushCore

/// vivo Push as the worker builds it (`ProviderModule`): its name and message rules, its `vivo` block, its apps'
/// lanes (an auth token shared by each app's lanes) and its credential check. The worker names this type once, in
/// its list of providers.
public struct VivoModule: ProviderModule {
    /// The `vivo` block, declared once (defaults: `VivoSettings`, `VivoApp`).
    public static let block = SettingsBlock<VivoSettings, VivoApp>(
        name: "vivo",
        keys: [.endpoint(\.endpoint), .caFile(\.caFile), .connections(\.connections),
               .maxConnections(\.maxConnections, connections: \.connections), .requestTimeout(\.requestTimeoutMillis),
               .text("quota_reset", \.quotaReset)],
        appKeys: [.text("topic", \.topic), .text("app_id", \.appID), .text("app_key", \.appKey),
                  .secretFile("app_secret_file", \.appSecretFile),
                  .number("classification", \.classification, min: 0, max: 1), .text("category", \.category),
                  .number("system_classification", \.systemClassification, min: 0, max: 1), .text("system_category", \.systemCategory),
                  .number("bulk_classification", \.bulkClassification, min: 0, max: 1), .text("bulk_category", \.bulkCategory),
                  .number("requests_per_s", \.requestsPerSecond, min: 1)],
        settings: { VivoSettings() }, app: { VivoApp(topic: "") },
        apps: \.apps, topic: \.topic,
        finishApp: { app, key in
            guard !app.appID.isEmpty, !app.appKey.isEmpty, !app.appSecretFile.isEmpty else {
                throw ConfigurationError.invalid(key: key, reason: "needs app_id, app_key and app_secret_file")
            }
        })

    public static let description = ProviderDescription(
        name: "vivo",
        // A list push takes up to 1,000 regIds; vivo's size cap is not published: the common 4,096 bytes.
        messageRules: AndroidVendorRules(maxPayloadBytes: 4096, tokensPerRequest: 1000),
        block: block,
        permanentReasons: [])

    public let settings: VivoSettings

    public init(settings: VivoSettings) {
        self.settings = settings
    }

    public init(block: ConfigurationBlock) throws {
        let settings = try Self.block.read(block)
        do {
            _ = try QuotaDay(parsing: settings.quotaReset)
        } catch {
            throw ConfigurationError.invalid(key: "vivo.quota_reset", reason: error.description)
        }
        self.settings = settings
    }

    public var summaryLines: [String] { Self.block.summaryLines(settings) }

    /// An app without a chat class: vivo counts its chat as operation messages, capped per device a day.
    public var warnings: [String] {
        settings.apps.enumerated().compactMap { index, app in
            guard app.classification != 1 || app.category.isEmpty else { return nil }
            return "vivo.apps.\(index) (\(app.topic)): no chat class (classification 1 with category IM): vivo counts the app's "
                + "chat pushes as operation messages, capped at a few a day per device"
        }
    }

    public var topics: [String] { settings.apps.map(\.topic) }

    public var caFile: String { settings.caFile }

    private func endpoint(_ path: String) -> TokenEndpoint {
        TokenEndpoint(uri: settings.endpoint + path, caFile: settings.caFile, timeoutMillis: settings.requestTimeoutMillis)
    }

    public func makeLanes(_ context: LaneContext) throws -> [ProviderAppLanes] {
        let metrics = ServiceMetrics.of(Self.provider)
        let quotaDay = (try? QuotaDay(parsing: settings.quotaReset)) ?? .beijingMidnight
        var made: [ProviderAppLanes] = []
        do {
            for app in settings.apps {
                let secret = try SecretFile.read(app.appSecretFile, what: "app secret")
                let readiness = AccessTokenReadiness(readiness: context.readiness, app: app.topic, service: "vivo")
                metrics.registerAccessTokenSeries(app: app.topic)
                let cache = VivoAuth.cache(app: app, appSecret: secret, endpoint: endpoint(VivoAuth.path),
                                           onExchange: { metrics.accessTokenRenewal(app: app.topic, ok: $0) }, onChange: readiness.changed)
                let count = context.laneCount(connections: settings.connections)
                let rate = VivoLanes.rateLimit(for: app)
                let deliveries = AppDeliveryRecord.of(provider: Self.provider, app: app.topic)
                let lanes = try context.lanes(
                    count: count,
                    settings: { VivoLanes.transportSettings(for: app, settings: settings, rateLimit: rate, lanes: count, lane: $0) },
                    service: { VivoService(app: app, tokens: cache, saveEndpoint: endpoint(VivoService.savePath), quotaDay: quotaDay,
                                           deliveries: deliveries, metrics: metrics, logger: context.logger) })
                made.append(ProviderAppLanes(app: app.topic, lanes: lanes, started: { cache.wakeOnChange($0) },
                                             shutdown: { @Sendable in await cache.shutdown() }, stop: { @Sendable in cache.stop() }))
            }
        } catch {
            made.forEach { $0.stop?() }
            throw error
        }
        return made
    }

    public func checkCredentials() -> [(app: String, problem: String?, detail: String)] {
        settings.apps.map { app in
            do {
                let secret = try SecretFile.read(app.appSecretFile, what: "app secret")
                let auth = endpoint(VivoAuth.path)
                switch VivoAuth.exchange(app: app, appSecret: secret, endpoint: auth, nowMillis: WallClock.nowMillis()) {
                case .granted: return (app.topic, nil, "an auth token granted by \(auth.uri)")
                case .refused(let reason): return (app.topic, reason, "")
                case .unavailable(let reason): return (app.topic, "\(auth.uri) could not be asked: \(reason)", "")
                }
            } catch {
                return (app.topic, "\(error)", "")
            }
        }
    }
}

/// How a vivo app's lanes reach vivo (`VendorLanes`), with the app's rate in requests a second (as vivo counts
/// them), shared by its lanes and across the fleet.
public enum VivoLanes {
    public static let responseBodyLimit = VendorLanes.responseBodyLimit(listing: 1000)

    public static func rateLimit(for app: VivoApp) -> AppRateLimit {
        AppRateLimit(requestsPerSecond: app.requestsPerSecond, tokensPerSecond: nil,
                     fleet: FleetRateShares.process.share(provider: VivoModule.provider, app: app.topic,
                                                          requestsPerSecond: app.requestsPerSecond, tokensPerSecond: nil))
    }

    public static func transportSettings(for app: VivoApp, settings: VivoSettings, rateLimit: AppRateLimit,
                                         lanes: Int = 1, lane: Int = 0) -> TransportSettings {
        VendorLanes.transportSettings(
            baseURL: settings.endpoint, caFile: settings.caFile, connections: settings.connections, maxConnections: settings.maxConnections,
            requestTimeoutMillis: settings.requestTimeoutMillis, responseBodyLimit: responseBodyLimit, rateLimit: rateLimit,
            app: app.topic, lanes: lanes, lane: lane)
    }
}
