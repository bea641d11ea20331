import Foundation
import ProviderKit
import PushCore

/// Xiaomi MiPush as the worker builds it (`ProviderModule`): its name and message rules, its `xiaomi` block, its
/// apps' lanes and its credential check. The worker names this type once, in its list of providers.
public struct XiaomiModule: ProviderModule {
    /// The `xiaomi` block, declared once: its keys, how each is read and shown (defaults: `XiaomiSettings`, `XiaomiApp`).
    public static let block = SettingsBlock<XiaomiSettings, XiaomiApp>(
        name: "xiaomi",
        keys: [.endpoint(\.endpoint), .caFile(\.caFile), .connections(\.connections),
               .maxConnections(\.maxConnections, connections: \.connections), .requestTimeout(\.requestTimeoutMillis),
               .text("quota_reset", \.quotaReset)],
        appKeys: [.text("topic", \.topic), .text("package", \.package), .secretFile("app_secret_file", \.appSecretFile),
                  .text("channel_id", \.channelID), .text("template_id", \.templateID),
                  .text("system_channel_id", \.systemChannelID), .text("bulk_channel_id", \.bulkChannelID),
                  .number("requests_per_s", \.requestsPerSecond, min: 1),
                  // Checked with the rest of the block (`XiaomiSettings.problems`), which names what is wrong with them.
                  .text("endpoint", \.endpoint, empty: .hidden), .text("callback_url", \.callbackURL, empty: .hidden)],
        settings: { XiaomiSettings() }, app: { XiaomiApp(topic: "", appSecretFile: "") },
        apps: \.apps, topic: \.topic,
        finishApp: { app, _ in
            // The package defaults to the topic, which is usually the package name.
            if app.package.isEmpty { app.package = app.topic }
            if app.callbackURL.hasSuffix("/") { app.callbackURL = String(app.callbackURL.dropLast()) }
        })

    public static let description = ProviderDescription(
        name: "xiaomi",
        // Xiaomi's limits on what it shows: a title under 50 characters, a description under 128, counted as its Java
        // server counts them (UTF-16 units: an emoji is two). Its size cap is not published; the 4,096 bytes other
        // vendors publish is taken as the common one.
        messageRules: AndroidVendorRules(maxPayloadBytes: 4096, maxTitleCharacters: XiaomiMessageFields.maxTitleCharacters,
                                         maxBodyCharacters: XiaomiMessageFields.maxDescriptionCharacters,
                                         tokensPerRequest: XiaomiService.maxRegIDsPerRequest, countsUTF16: true),
        block: block,
        // The codes that say the message itself is wrong: a replay sends it to the same refusal.
        permanentReasons: ["10008", "10012", "10016", "10017", "21305", "27001", "65009", "65014", "65015", "65036", "65037",
                           "65038"])

    public let settings: XiaomiSettings

    public init(settings: XiaomiSettings) {
        self.settings = settings
    }

    /// Reads the `xiaomi` block; a bad value is an error naming its key.
    public init(block: ConfigurationBlock) throws {
        let settings = try Self.block.read(block)
        if let problem = settings.problems().first { throw ConfigurationError.invalid(key: "xiaomi", reason: problem) }
        self.settings = settings
    }

    public var summaryLines: [String] { Self.block.summaryLines(settings) }

    /// An app without a chat class: Xiaomi caps its chat at one push per device per day.
    public var warnings: [String] {
        settings.apps.enumerated().compactMap { index, app in
            guard app.channelID.isEmpty else { return nil }
            return "xiaomi.apps.\(index) (\(app.topic)): no chat class (channel_id is empty): Xiaomi caps the app's chat at "
                + "one push per device per day; set the private channel registered in Xiaomi's console"
        }
    }

    public var topics: [String] { settings.apps.map(\.topic) }

    /// The apps with a `callback_url`, each with the secret path its secret makes; nil when none has one.
    public func receiptReader() throws -> (any ReceiptReader)? {
        let apps = settings.apps.filter { !$0.callbackURL.isEmpty }
        guard !apps.isEmpty else { return nil }
        return XiaomiReceiptReader(paths: try apps.map { app in
            (topic: app.topic, path: XiaomiCallbackPath.segment(secret: try XiaomiAppSecret.read(file: app.appSecretFile), package: app.package))
        })
    }

    public var caFile: String { settings.caFile }

    /// Each app: one lane per two cores (at most its connections), sharing the app's rate and its record of
    /// deliveries; the secret read once per lane's service (a missing file is an error naming it).
    public func makeLanes(_ context: LaneContext) throws -> [ProviderAppLanes] {
        let metrics = ServiceMetrics.of(Self.provider)
        return try settings.apps.map { app in
            let count = context.laneCount(connections: settings.connections)
            let rate = XiaomiLanes.rateLimit(for: app)
            let deliveries = AppDeliveryRecord.of(provider: Self.provider, app: app.topic)
            return ProviderAppLanes(app: app.topic, lanes: try context.lanes(
                count: count,
                settings: { XiaomiLanes.transportSettings(for: app, in: settings, rateLimit: rate, lane: $0, lanes: count) },
                service: { try XiaomiService(app: app, settings: settings, metrics: metrics, deliveries: deliveries) }))
        }
    }

    /// Each app's secret file read and checked as the lanes read it (MiPush has no way to test a key without
    /// sending).
    public func checkCredentials() -> [(app: String, problem: String?, detail: String)] {
        settings.apps.map { app in
            do {
                _ = try XiaomiService(app: app, settings: settings, metrics: ServiceMetrics.of(Self.provider))
                return (app.topic, nil, "\(app.appSecretFile): an app secret (MiPush cannot check a key without sending)")
            } catch {
                return (app.topic, "\(error)", "")
            }
        }
    }
}
