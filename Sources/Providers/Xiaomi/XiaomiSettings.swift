import AndroidPushKit
import PushCore

/// The `xiaomi` block of the configuration: where MiPush is, how many connections an app keeps, when
/// its quota day rolls over, and the apps. Plain values: reading YAML or the environment into it is the
/// configuration's job, `problems()` says what it should refuse.
public struct XiaomiSettings: Sendable, Equatable {
    /// Mainland China's MiPush host. Devices registered in another region are reached only through that region's
    /// host (`ru-api…`, `idmb-api…`, `fr-api…`, `sgp-api….xmpush.global.xiaomi.com`), so the endpoint is per
    /// deployment, not a constant.
    public static let defaultEndpoint = "https://api.xmpush.xiaomi.com"
    /// Beijing midnight: assumed (unverified), since Xiaomi's pages do not say when its day begins.
    public static let defaultQuotaReset = "00:00+08:00"

    /// `https://host[:port]`, without a trailing slash.
    public var endpoint: String
    /// An extra CA to trust (the emulator, tests); empty: the system's roots.
    public var caFile: String
    /// Connections per app opened at start...
    public var connections: Int
    /// ...and at most (64). Over HTTP/1.1 (what most MiPush clients speak) each connection carries one request at a
    /// time, so this bounds an app's requests on the wire, and the pool grows with the traffic up to it.
    public var maxConnections: Int
    public var requestTimeoutMillis: Int
    /// When a Xiaomi day (and with it an app's daily quota, code 10034) rolls over: `HH:MM` and a UTC offset.
    public var quotaReset: String
    public var apps: [XiaomiApp]

    public init(endpoint: String = XiaomiSettings.defaultEndpoint, caFile: String = "", connections: Int = 2,
                maxConnections: Int = 64, requestTimeoutMillis: Int = 10_000,
                quotaReset: String = XiaomiSettings.defaultQuotaReset, apps: [XiaomiApp] = []) {
        self.endpoint = endpoint
        self.caFile = caFile
        self.connections = connections
        self.maxConnections = maxConnections
        self.requestTimeoutMillis = requestTimeoutMillis
        self.quotaReset = quotaReset
        self.apps = apps
    }

    /// No apps: Xiaomi is off.
    public var isEnabled: Bool { !apps.isEmpty }

    /// The app a message's `topic` selects.
    public func app(topic: String) -> XiaomiApp? { apps.first { $0.topic == topic } }

    /// What a configuration check should refuse, one sentence each naming the key (`xiaomi.apps.0.package`);
    /// empty when the block is usable. Files are not read here (`XiaomiService.init` reads the secret).
    public func problems() -> [String] {
        var found: [String] = []
        if !(endpoint.hasPrefix("https://") && endpoint.count > "https://".count) || endpoint.hasSuffix("/") {
            found.append("xiaomi.endpoint must be https://host[:port] without a trailing slash, not \"\(Printable.clipped(endpoint, to: 80))\"")
        }
        if connections < 1 { found.append("xiaomi.connections must be at least 1") }
        if maxConnections < max(1, connections) { found.append("xiaomi.max_connections must be at least xiaomi.connections") }
        if requestTimeoutMillis < 1 { found.append("xiaomi.request_timeout_ms must be at least 1") }
        do {
            _ = try QuotaDay(parsing: quotaReset)
        } catch {
            found.append("xiaomi.quota_reset: \(error.description)")
        }
        var topics: Set<String> = []
        for (index, app) in apps.enumerated() {
            let key = "xiaomi.apps.\(index)"
            if app.topic.isEmpty { found.append("\(key).topic is empty") }
            if !topics.insert(app.topic).inserted { found.append("\(key).topic \(app.topic) is configured twice") }
            if app.package.isEmpty || app.package.contains(",") {
                // A comma would name several packages in `restricted_package_name`.
                found.append("\(key).package must be one Android package name")
            }
            if app.appSecretFile.isEmpty { found.append("\(key).app_secret_file is empty") }
            if app.requestsPerSecond < 1 { found.append("\(key).requests_per_s must be at least 1") }
            if !app.callbackURL.isEmpty, let problem = XiaomiCallbackPath.problem(baseURL: app.callbackURL) {
                found.append("\(key).callback_url \(problem)")
            }
            if !app.endpoint.isEmpty && (!(app.endpoint.hasPrefix("https://") && app.endpoint.count > "https://".count) || app.endpoint.hasSuffix("/")) {
                found.append("\(key).endpoint must be https://host[:port] without a trailing slash, not \"\(Printable.clipped(app.endpoint, to: 80))\"")
            }
        }
        return found
    }
}

/// One Xiaomi app (one MiPush registration): the `topic` messages name with `"provider": "xiaomi"`, the Android
/// package it sends to, its AppSecret (in a file) and its private-message classification.
public struct XiaomiApp: Sendable, Equatable {
    /// Xiaomi's QPS tiers go by the app's daily connected MIUI devices: 500 below 100 k, 1,000 up to 1 M, 2,000
    /// up to 5 M, 2,500 up to 10 M, 3,000 above (aggregators' figures). 500 is the tier every app has: a rate set
    /// above the app's tier costs 10027 answers, each a retry that spends an attempt until the rate has been
    /// lowered, while one below it only waits. At 1,000 regIds a request it is still 500,000 devices a second
    /// for group messages; a large chat app (one request per private message) should set its own tier.
    public static let defaultRequestsPerSecond = 500

    public var topic: String
    /// `restricted_package_name`.
    public var package: String
    /// A file holding the AppSecret (`Authorization: key=<AppSecret>`), surrounding whitespace trimmed.
    public var appSecretFile: String
    /// The private (私信, chat) channel registered in Xiaomi's console, sent as `extra.channel_id` unless the
    /// message's `xiaomi` object names one. Empty: none, and Xiaomi then caps the app's notifications at one per
    /// device per day (or refuses them, for apps on the new classification).
    public var channelID: String
    /// The private-message template (`extra.template_id`) where Xiaomi requires one, for chat messages only;
    /// empty: no template.
    public var templateID: String
    /// The channels of `kind: system` messages and of the bulk list's (a public channel, under Xiaomi's daily
    /// quota); empty: none, Xiaomi's default. A broadcast never goes out on the private channel: Xiaomi audits it.
    public var systemChannelID: String
    public var bulkChannelID: String
    public var requestsPerSecond: Int
    /// This app's MiPush host where it differs from the block's `endpoint`: a regId is served only by the host of the
    /// region its device registered in (`ru-api`, `idmb-api`, `fr-api`, `sgp-api` `.xmpush.global.xiaomi.com`, or
    /// the mainland's `api.xmpush.xiaomi.com`), and another region's host names it invalid. "" for the block's.
    public var endpoint: String
    /// Receipts (`receipts.listen`): the public base URL of the worker's receipts listener as Xiaomi reaches it
    /// (`https://push.example.com`, behind the operator's TLS). Each message then asks for receipts at
    /// `<callback_url>/receipts/xiaomi/<the app's secret path>` (`XiaomiCallbackPath`). "": no receipts.
    public var callbackURL: String

    /// `package` nil: the topic, which is usually the package name.
    public init(topic: String, package: String? = nil, appSecretFile: String, channelID: String = "", templateID: String = "",
                systemChannelID: String = "", bulkChannelID: String = "", requestsPerSecond: Int = XiaomiApp.defaultRequestsPerSecond,
                endpoint: String = "", callbackURL: String = "") {
        self.topic = topic
        self.package = package ?? topic
        self.appSecretFile = appSecretFile
        self.channelID = channelID
        self.templateID = templateID
        self.systemChannelID = systemChannelID
        self.bulkChannelID = bulkChannelID
        self.requestsPerSecond = requestsPerSecond
        self.endpoint = endpoint
        self.callbackURL = callbackURL.hasSuffix("/") ? String(callbackURL.dropLast()) : callbackURL
    }
}

extension XiaomiApp {
    /// The configuration key of the channel of `messageClass`.
    public static func channelKey(for messageClass: MessageClass) -> String {
        switch messageClass {
        case .chat: return "channel_id"
        case .system: return "system_channel_id"
        case .bulk: return "bulk_channel_id"
        }
    }

    /// The channel a message of `messageClass` is sent on ("" for none).
    public func channelID(for messageClass: MessageClass) -> String {
        switch messageClass {
        case .chat: return channelID
        case .system: return systemChannelID
        case .bulk: return bulkChannelID
        }
    }
}
