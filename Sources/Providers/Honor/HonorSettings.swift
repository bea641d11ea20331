import AndroidPushKit
import PushCore

/// The `honor` block of the configuration: where Honor Push is, its token endpoint, how many connections an app
/// keeps, and the apps. Plain values: reading YAML or the environment into it is the module's declaration
/// (`HonorModule.block`).
public struct HonorSettings: Sendable, Equatable {
    /// Honor's send host as its current guide shows it (an older copy named `push-api.cloud.hihonor.com`; both
    /// unverified as to which stays current, so the endpoint is configuration).
    public static let defaultEndpoint = "https://push-api.cloud.honor.com"
    /// The token path every recent open-source sender uses; Honor's guide also shows
    /// `/auth/realms/developer/protocol/openid-connect/token` on the same host. Unverified which stays valid.
    public static let defaultTokenURI = "https://iam.developer.honor.com/auth/token"

    /// `https://host[:port]`, without a trailing slash.
    public var endpoint = HonorSettings.defaultEndpoint
    /// The OAuth 2.0 token endpoint (client credentials).
    public var tokenURI = HonorSettings.defaultTokenURI
    /// An extra CA to trust (the emulator, tests); empty: the system's roots.
    public var caFile = ""
    /// Connections per app opened at start...
    public var connections = 2
    /// ...and at most (over HTTP/1.1 each carries one request at a time: the pool grows with the traffic up to it).
    public var maxConnections = 64
    public var requestTimeoutMillis = 10_000
    public var apps: [HonorApp] = []

    public init(apps: [HonorApp] = []) {
        self.apps = apps
    }

    /// No apps: Honor is off.
    public var isEnabled: Bool { !apps.isEmpty }
}

/// One Honor app: the `topic` messages name with `"provider": "honor"`, its app id (in the send path), its OAuth
/// client (id, and the secret in a file), its importance per message class and its rate.
public struct HonorApp: Sendable, Equatable {
    /// Honor's QPS is 3,000 per app, fixed (aggregators' figure); whether it counts requests or devices is not
    /// said. The conservative reading is devices: at 3,000 tokens a second an app stays within it either way, and an
    /// app that knows Honor counts requests raises it.
    public static let defaultTokensPerSecond = 3000

    public var topic: String
    /// The app's id in Honor's console: the send path's `{appId}`.
    public var appID: String
    /// The OAuth 2.0 client id and secret file of the app (Honor's console shows them beside the app id).
    public var clientID: String
    public var clientSecretFile: String
    /// `android.notification.importance` of chat messages: `NORMAL` is Honor's service-and-communication class
    /// (unlimited, for apps granted the self-classification right); `LOW` is news and marketing, capped per
    /// device a day. "" sends none: Honor's default, marketing.
    public var importance: String
    /// That of `kind: system` messages and of the bulk list's ("" sends none: marketing).
    public var systemImportance: String
    public var bulkImportance: String
    public var tokensPerSecond: Int
    /// This app's host where it differs from the block's `endpoint` ("" for the block's).
    public var endpoint: String

    public init(topic: String, appID: String = "", clientID: String = "", clientSecretFile: String = "", importance: String = "NORMAL",
                systemImportance: String = "", bulkImportance: String = "", tokensPerSecond: Int = HonorApp.defaultTokensPerSecond,
                endpoint: String = "") {
        self.topic = topic
        self.appID = appID
        self.clientID = clientID
        self.clientSecretFile = clientSecretFile
        self.importance = importance
        self.systemImportance = systemImportance
        self.bulkImportance = bulkImportance
        self.tokensPerSecond = tokensPerSecond
        self.endpoint = endpoint
    }

    /// The importance a message of `messageClass` is sent with ("" for none).
    public func importance(for messageClass: MessageClass) -> String {
        ClassValues(chat: importance, system: systemImportance, bulk: bulkImportance)[messageClass]
    }
}
