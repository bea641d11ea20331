import AndroidPushKit
import ProviderKit
import PushCore

/// OPPO Push (OPUSH) as the worker builds it (`ProviderModule`): its name and message rules, its `oppo` block, its
/// apps' lanes (a daily auth token shared by each app's lanes) and its credential check. The worker names this
/// type once, in its list of providers.
public struct OPPOModule: ProviderModule {
    /// The `oppo` block, declared once (defaults: `OPPOSettings`, `OPPOApp`).
    public static let block = SettingsBlock<OPPOSettings, OPPOApp>(
        name: "oppo",
        keys: [.endpoint(\.endpoint), .caFile(\.caFile), .connections(\.connections),
               .maxConnections(\.maxConnections, connections: \.connections), .requestTimeout(\.requestTimeoutMillis),
               .text("quota_reset", \.quotaReset)],
        appKeys: [.text("topic", \.topic), .text("app_key", \.appKey), .secretFile("master_secret_file", \.masterSecretFile),
                  .text("category", \.category), .number("notify_level", \.notifyLevel, min: 0, max: 16),
                  .text("system_category", \.systemCategory), .number("system_notify_level", \.systemNotifyLevel, min: 0, max: 16),
                  .text("bulk_category", \.bulkCategory), .number("bulk_notify_level", \.bulkNotifyLevel, min: 0, max: 16),
                  .text("channel_id", \.channelID), .text("system_channel_id", \.systemChannelID),
                  .text("bulk_channel_id", \.bulkChannelID), .number("requests_per_s", \.requestsPerSecond, min: 1),
                  .httpsURL("endpoint", \.endpoint, empty: .hidden)],
        settings: { OPPOSettings() }, app: { OPPOApp(topic: "") },
        apps: \.apps, topic: \.topic,
        finishApp: { app, key in
            guard !app.appKey.isEmpty, !app.masterSecretFile.isEmpty else {
                throw ConfigurationError.invalid(key: key, reason: "needs app_key and master_secret_file")
            }
        })

    public static let description = ProviderDescription(
        name: "oppo",
        // OPPO's list limit is 1,000 messages a request; its size cap is not published: the common 4,096 bytes.
        messageRules: AndroidVendorRules(maxPayloadBytes: 4096, tokensPerRequest: 1000),
        block: block,
        // The message itself is wrong: a replay meets the same answer.
        permanentReasons: ["12", "31", "32", "40", "41", "51", "59"])

    public let settings: OPPOSettings

    public init(settings: OPPOSettings) {
        self.settings = settings
    }

    public init(block: ConfigurationBlock) throws {
        let settings = try Self.block.read(block)
        do {
            _ = try QuotaDay(parsing: settings.quotaReset)
        } catch {
            throw ConfigurationError.invalid(key: "oppo.quota_reset", reason: error.description)
        }
        self.settings = settings
    }

    public var summaryLines: [String] { Self.block.summaryLines(settings) }

    /// An app without a chat class: OPPO counts its chat as marketing.
    public var warnings: [String] {
        settings.apps.enumerated().compactMap { index, app in
            guard app.category.isEmpty else { return nil }
            return "oppo.apps.\(index) (\(app.topic)): no chat class (category is empty): OPPO counts the app's chat pushes as "
                + "marketing, capped at a few a day per device; set IM (communication and service, once OPPO approved it)"
        }
    }

    public var topics: [String] { settings.apps.map(\.topic) }

    public var caFile: String { settings.caFile }

    private func authEndpoint(for app: OPPOApp) -> TokenEndpoint {
        TokenEndpoint(uri: (app.endpoint.isEmpty ? settings.endpoint : app.endpoint) + OPPOAuth.path, caFile: settings.caFile,
                      timeoutMillis: settings.requestTimeoutMillis)
    }

    /// Each app: its master secret read (a startup error names the file), its auth token's renewal started, then
    /// one lane per two cores (at most its connections) sharing the app's rate and record of deliveries.
    public func makeLanes(_ context: LaneContext) throws -> [ProviderAppLanes] {
        let metrics = ServiceMetrics.of(Self.provider)
        let quotaDay = (try? QuotaDay(parsing: settings.quotaReset)) ?? .beijingMidnight
        var made: [ProviderAppLanes] = []
        do {
            for app in settings.apps {
                let secret = try SecretFile.read(app.masterSecretFile, what: "master secret")
                let readiness = AccessTokenReadiness(readiness: context.readiness, app: app.topic, service: "OPPO")
                metrics.registerAccessTokenSeries(app: app.topic)
                let cache = OPPOAuth.cache(appKey: app.appKey, masterSecret: secret, endpoint: authEndpoint(for: app), name: app.topic,
                                           onExchange: { metrics.accessTokenRenewal(app: app.topic, ok: $0) }, onChange: readiness.changed)
                let count = context.laneCount(connections: settings.connections)
                let rate = OPPOLanes.rateLimit(for: app)
                let deliveries = AppDeliveryRecord.of(provider: Self.provider, app: app.topic)
                let lanes = try context.lanes(
                    count: count,
                    settings: { OPPOLanes.transportSettings(for: app, settings: settings, rateLimit: rate, lanes: count, lane: $0) },
                    service: { OPPOService(app: app, tokens: cache, quotaDay: quotaDay, deliveries: deliveries, metrics: metrics,
                                           logger: context.logger) })
                made.append(ProviderAppLanes(app: app.topic, lanes: lanes, started: { cache.wakeOnChange($0) },
                                             shutdown: { @Sendable in await cache.shutdown() }, stop: { @Sendable in cache.stop() }))
            }
        } catch {
            made.forEach { $0.stop?() }
            throw error
        }
        return made
    }

    /// Each app's master secret read and one auth token asked for (a blocking call: `check-config` is a tool).
    public func checkCredentials() -> [(app: String, problem: String?, detail: String)] {
        settings.apps.map { app in
            do {
                let secret = try SecretFile.read(app.masterSecretFile, what: "master secret")
                let endpoint = authEndpoint(for: app)
                switch OPPOAuth.exchange(appKey: app.appKey, masterSecret: secret, endpoint: endpoint, nowMillis: WallClock.nowMillis()) {
                case .granted(_, let expiresIn):
                    return (app.topic, nil, "an auth token granted by \(endpoint.uri) (expires in \(expiresIn) s)")
                case .refused(let reason):
                    return (app.topic, reason, "")
                case .unavailable(let reason):
                    return (app.topic, "\(endpoint.uri) could not be asked: \(reason)", "")
                }
            } catch {
                return (app.topic, "\(error)", "")
            }
        }
    }
}

/// How an OPPO app's lanes reach OPPO (`VendorLanes`), with room for a batch's answer and the app's rate in
/// requests a second (as OPPO counts it), shared by its lanes and across the fleet.
public enum OPPOLanes {
    public static let responseBodyLimit = VendorLanes.responseBodyLimit(listing: 1000)

    public static func rateLimit(for app: OPPOApp) -> AppRateLimit {
        AppRateLimit(requestsPerSecond: app.requestsPerSecond, tokensPerSecond: nil,
                     fleet: FleetRateShares.process.share(provider: OPPOModule.provider, app: app.topic,
                                                          requestsPerSecond: app.requestsPerSecond, tokensPerSecond: nil))
    }

    public static func transportSettings(for app: OPPOApp, settings: OPPOSettings, rateLimit: AppRateLimit,
                                         lanes: Int = 1, lane: Int = 0) -> TransportSettings {
        VendorLanes.transportSettings(
            baseURL: app.endpoint.isEmpty ? settings.endpoint : app.endpoint, caFile: settings.caFile, connections: settings.connections,
            maxConnections: settings.maxConnections, requestTimeoutMillis: settings.requestTimeoutMillis,
            responseBodyLimit: responseBodyLimit, rateLimit: rateLimit, app: app.topic, lanes: lanes, lane: lane)
    }
}
