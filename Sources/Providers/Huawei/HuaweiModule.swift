import Foundation
import ProviderKit
import PushCore

/// Huawei Push Kit as the worker builds it (`ProviderModule`): its name and message rules, its `huawei` block, its
/// apps' lanes (v1 with an access token shared by the app's lanes, v3 with a JWT the service account signs) and its
/// credential check. The worker names this type once, in its list of providers.
public struct HuaweiModule: ProviderModule {
    /// The `huawei` block, declared once: its keys, how each is read and shown (defaults: `HuaweiSettings`, `HuaweiApp`).
    public static let block = SettingsBlock<HuaweiSettings, HuaweiApp>(
        name: "huawei",
        keys: [.endpoint(\.endpoint), .httpsURL("token_uri", \.tokenURI, allowPath: true), .caFile(\.caFile),
               .connections(\.connections), .maxConnections(\.maxConnections, connections: \.connections),
               .requestTimeout(\.requestTimeoutMillis)],
        appKeys: [.text("topic", \.topic), .choice("api", \.api), .text("app_id", \.appID),
                  .secretFile("client_secret_file", \.clientSecretFile), .secretFile("service_account_file", \.serviceAccountFile),
                  .text("category", \.category), .text("system_category", \.systemCategory), .text("bulk_category", \.bulkCategory),
                  .number("tokens_per_s", \.tokensPerSecond, min: 1),
                  // The app's own region's host, where it differs from the block's.
                  .httpsURL("endpoint", \.endpoint, empty: .hidden),
                  .secretFile("receipt_secret_file", \.receiptSecretFile, empty: .hidden),
                  .text("receipt_user_name", \.receiptUserName, empty: .hidden)],
        settings: { HuaweiSettings() }, app: { HuaweiApp(topic: "") },
        apps: \.apps, topic: \.topic,
        finishApp: { app, key in
            // The signature covers the user name: a secret without it (or the reverse) can check nothing.
            guard app.receiptSecretFile.isEmpty == app.receiptUserName.isEmpty else {
                throw ConfigurationError.invalid(key: key, reason: "receipts need both receipt_secret_file and receipt_user_name (the callback's user name registered with that secret), or neither")
            }
            switch app.api {
            case .v1:
                guard !app.appID.isEmpty, !app.clientSecretFile.isEmpty else {
                    throw ConfigurationError.invalid(key: key, reason: "api v1 needs app_id and client_secret_file")
                }
            case .v3:
                guard !app.serviceAccountFile.isEmpty else {
                    throw ConfigurationError.invalid(key: key, reason: "api v3 needs service_account_file")
                }
            }
        })

    public static let description = ProviderDescription(
        name: "huawei",
        // 4,096 bytes of message without the tokens (80300008), 1,000 tokens a request (80300010).
        messageRules: AndroidVendorRules(maxPayloadBytes: 4096, tokensPerRequest: 1000),
        block: block,
        // The codes that say the message itself is wrong: a replay sends it to the same refusal.
        permanentReasons: ["80100001", "80100003", "80100004", "80100013", "80100016", "80100018", "80100022", "80300008",
                           "80300010", "80300011"])

    public let settings: HuaweiSettings

    public init(settings: HuaweiSettings) {
        self.settings = settings
    }

    /// Reads the `huawei` block; a bad value is an error naming its key.
    public init(block: ConfigurationBlock) throws {
        settings = try Self.block.read(block)
    }

    public var summaryLines: [String] { Self.block.summaryLines(settings) }

    /// An app without a chat class: Huawei counts its chat as marketing.
    public var warnings: [String] {
        settings.apps.enumerated().compactMap { index, app in
            guard app.category.isEmpty else { return nil }
            return "huawei.apps.\(index) (\(app.topic)): no chat class (category is empty): Huawei counts the app's chat "
                + "pushes as marketing, capped at a few a day per device; set the category Huawei granted (IM)"
        }
    }

    public var topics: [String] { settings.apps.map(\.topic) }

    /// The apps with receipt settings, their secrets read now; nil when none has them.
    public func receiptReader() throws -> (any ReceiptReader)? {
        let apps = settings.apps.filter(\.takesReceipts)
        guard !apps.isEmpty else { return nil }
        return HuaweiReceiptReader(signers: try apps.map { try HuaweiReceiptSigner.load(app: $0) })
    }

    public var caFile: String { settings.caFile }

    /// Each app: its credential (a startup error names the file, never the secret), then one lane per two cores
    /// (at most its connections) sharing the app's rate and its record of deliveries.
    public func makeLanes(_ context: LaneContext) throws -> [ProviderAppLanes] {
        let metrics = ServiceMetrics.of(Self.provider)
        var made: [ProviderAppLanes] = []
        do {
            for app in settings.apps {
                let tokenReadiness = AccessTokenReadiness(readiness: context.readiness, app: app.topic, service: "Huawei")
                if app.api == .v1 { metrics.registerAccessTokenSeries(app: app.topic) }
                let credential = try HuaweiCredential.make(
                    for: app, settings: settings,
                    onExchange: { metrics.accessTokenRenewal(app: app.topic, ok: $0) }, onChange: tokenReadiness.changed)
                var cache: AccessTokenCache?
                if case .clientCredentials(let made) = credential { cache = made }
                let count = context.laneCount(connections: settings.connections)
                let rate = HuaweiLaneSettings.rateLimit(for: app)
                let deliveries = AppDeliveryRecord.of(provider: Self.provider, app: app.topic)
                var appLanes = ProviderAppLanes(app: app.topic, lanes: try context.lanes(
                    count: count,
                    settings: { HuaweiLaneSettings.transportSettings(for: app, settings: settings, rateLimit: rate, lanes: count, lane: $0) },
                    service: { HuaweiService(app: app, credential: credential, deliveries: deliveries, metrics: metrics, logger: context.logger) }))
                if let cache {
                    appLanes.started = { cache.wakeOnChange($0) }
                    appLanes.shutdown = { @Sendable in await cache.shutdown() }
                    appLanes.stop = { @Sendable in cache.stop() }
                }
                made.append(appLanes)
            }
        } catch {
            made.forEach { $0.stop?() }
            throw error
        }
        return made
    }

    /// Each app's credential loaded and proved as the lanes would: v3 signs a JWT; v1 asks `token_uri` for an
    /// access token once (a blocking exchange: `check-config` is a tool, not the worker's pool).
    public func checkCredentials() -> [(app: String, problem: String?, detail: String)] {
        settings.apps.map { app in
            switch app.api {
            case .v3:
                do {
                    let account = try HuaweiServiceAccount.load(path: app.serviceAccountFile)
                    let signer = try HuaweiJWTSigner(account: account, defaultAudience: settings.tokenURI)
                    _ = try signer.current()
                    return (app.topic, nil, "\(app.serviceAccountFile): a PS256 JWT signed (project \(account.projectID))")
                } catch {
                    return (app.topic, "\(error)", "")
                }
            case .v1:
                do {
                    let credentials = try HuaweiClientCredentials.load(clientID: app.appID, secretFile: app.clientSecretFile)
                    let endpoint = TokenEndpoint(uri: settings.tokenURI, caFile: settings.caFile,
                                                 timeoutMillis: settings.requestTimeoutMillis)
                    switch HuaweiAccessTokens.exchange(credentials: credentials, endpoint: endpoint) {
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
}
