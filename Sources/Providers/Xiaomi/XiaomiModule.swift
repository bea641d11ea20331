import Foundation
import ProviderKit
import PushCore

/// Xiaomi MiPush as the worker builds it (`ProviderModule`): its name and message rules, its `xiaomi` block, its
/// apps' lanes and its credential check. The worker names this type once, in its list of providers.
public struct XiaomiModule: ProviderModule {
    public static let description = ProviderDescription(
        name: "xiaomi",
        // Xiaomi's limits on what it shows: a title under 50 characters, a description under 128, counted as its Java
        // server counts them (UTF-16 units: an emoji is two). Its size cap is not published; the 4,096 bytes other
        // vendors publish is taken as the common one.
        messageRules: AndroidVendorRules(maxPayloadBytes: 4096, maxTitleCharacters: XiaomiMessageFields.maxTitleCharacters,
                                         maxBodyCharacters: XiaomiMessageFields.maxDescriptionCharacters,
                                         tokensPerRequest: XiaomiService.maxRegIDsPerRequest, countsUTF16: true),
        settingsKeys: ["endpoint", "ca_file", "connections", "max_connections", "request_timeout_ms", "quota_reset"],
        appKeys: ["topic", "package", "app_secret_file", "channel_id", "template_id", "system_channel_id", "bulk_channel_id",
                  "requests_per_s", "endpoint", "callback_url"],
        secretFileAppKeys: ["app_secret_file"],
        // The codes that say the message itself is wrong: a replay sends it to the same refusal.
        permanentReasons: ["10008", "10012", "10016", "10017", "21305", "27001", "65009", "65014", "65015", "65036", "65037",
                           "65038"])

    public let settings: XiaomiSettings

    public init(settings: XiaomiSettings) {
        self.settings = settings
    }

    /// Reads the `xiaomi` block; a bad value is an error naming its key.
    public init(block: ConfigurationBlock) throws {
        var settings = XiaomiSettings()
        settings.endpoint = try block.httpsURL("endpoint", settings.endpoint)
        settings.caFile = block.string("ca_file", "")
        settings.connections = try block.int("connections", settings.connections, min: 1, max: 1024)
        settings.maxConnections = try block.int("max_connections", max(settings.maxConnections, settings.connections),
                                                min: settings.connections, max: 1024)
        settings.requestTimeoutMillis = try block.int("request_timeout_ms", settings.requestTimeoutMillis, min: 1)
        settings.quotaReset = block.string("quota_reset", settings.quotaReset).trimmingCharacters(in: .whitespaces)
        for index in block.appIndices {
            let key = "apps.\(index)"
            let topic = block.string("\(key).topic", "").trimmingCharacters(in: .whitespaces)
            let package = block.string("\(key).package", "").trimmingCharacters(in: .whitespaces)
            settings.apps.append(XiaomiApp(
                topic: topic, package: package.isEmpty ? nil : package,
                appSecretFile: block.string("\(key).app_secret_file", "").trimmingCharacters(in: .whitespaces),
                channelID: block.string("\(key).channel_id", "").trimmingCharacters(in: .whitespaces),
                templateID: block.string("\(key).template_id", "").trimmingCharacters(in: .whitespaces),
                systemChannelID: block.string("\(key).system_channel_id", "").trimmingCharacters(in: .whitespaces),
                bulkChannelID: block.string("\(key).bulk_channel_id", "").trimmingCharacters(in: .whitespaces),
                requestsPerSecond: try block.int("\(key).requests_per_s", XiaomiApp.defaultRequestsPerSecond, min: 1),
                endpoint: block.string("\(key).endpoint", "").trimmingCharacters(in: .whitespaces),
                callbackURL: block.string("\(key).callback_url", "").trimmingCharacters(in: .whitespaces)))
        }
        if let problem = settings.problems().first { throw ConfigurationError.invalid(key: "xiaomi", reason: problem) }
        self.settings = settings
    }

    public var summaryLines: [String] {
        [
            "xiaomi.endpoint: \(settings.endpoint)",
            "xiaomi.ca_file: \(settings.caFile.isEmpty ? "(system CAs)" : settings.caFile)",
            "xiaomi.connections: \(settings.connections)",
            "xiaomi.max_connections: \(settings.maxConnections)",
            "xiaomi.request_timeout_ms: \(settings.requestTimeoutMillis)",
            "xiaomi.quota_reset: \(settings.quotaReset)",
        ] + settings.apps.enumerated().map { index, app in
            "xiaomi.apps.\(index): \(app.topic), package \(app.package), app_secret_file \(app.appSecretFile)"
                + ", channel_id \(app.channelID.isEmpty ? "(none)" : app.channelID)"
                + ", template_id \(app.templateID.isEmpty ? "(none)" : app.templateID)"
                + ", system_channel_id \(app.systemChannelID.isEmpty ? "(none)" : app.systemChannelID)"
                + ", bulk_channel_id \(app.bulkChannelID.isEmpty ? "(none)" : app.bulkChannelID)"
                + ", requests_per_s \(app.requestsPerSecond)" + (app.endpoint.isEmpty ? "" : ", endpoint \(app.endpoint)")
                + (app.callbackURL.isEmpty ? "" : ", callback_url \(app.callbackURL)")
        }
    }

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
