import PushCore

/// The `huawei` block of the configuration: where Push Kit and its OAuth endpoint are, the connections
/// and timeout every app's lanes use, and the apps. Plain values with Huawei's production defaults; reading them
/// from YAML is the configuration loader's job, not this module's.
public struct HuaweiSettings: Sendable, Equatable {
    /// `https://push-api.cloud.huawei.com`, or `https://host:port` (the emulator), without a trailing slash.
    public var endpoint: String
    /// The OAuth 2.0 token endpoint of v1 apps (client credentials), and the `aud` of v3 JWTs whose key file names
    /// no `token_uri`.
    public var tokenURI: String
    /// An extra CA to trust (the emulator's); empty: the system's.
    public var caFile: String
    /// Connections per app opened at start, and at most: over HTTP/1.1 (what Huawei documents) a connection carries
    /// one request at a time, so the pool grows with the traffic up to `maxConnections` (64: one-token chat at 50 ms
    /// a round trip is over 1,000 requests a second); over h2 the requests share the first connections' streams.
    public var connections: Int
    public var maxConnections: Int
    public var requestTimeoutMillis: Int
    public var apps: [HuaweiApp]

    public static let productionEndpoint = "https://push-api.cloud.huawei.com"
    public static let productionTokenURI = "https://oauth-login.cloud.huawei.com/oauth2/v3/token"

    public init(endpoint: String = HuaweiSettings.productionEndpoint, tokenURI: String = HuaweiSettings.productionTokenURI,
                caFile: String = "", connections: Int = 2, maxConnections: Int = 64, requestTimeoutMillis: Int = 10_000,
                apps: [HuaweiApp] = []) {
        self.endpoint = endpoint
        self.tokenURI = tokenURI
        self.caFile = caFile
        self.connections = connections
        self.maxConnections = maxConnections
        self.requestTimeoutMillis = requestTimeoutMillis
        self.apps = apps
    }
}

/// Which Push Kit API an app is registered for: a HarmonyOS 5+ app is a registration of its own (its own `topic`),
/// apart from the Android app of the same product.
public enum HuaweiAPI: String, Sendable, Equatable, CaseIterable {
    /// Android (HMS Core) and HarmonyOS 3.x/4.x: `/v1/<app_id>/messages:send`, OAuth 2.0 client credentials.
    case v1
    /// HarmonyOS 5+ (NEXT): `/v3/<project_id>/messages:send`, a JWT the service account signs itself (PS256).
    case v3
}

/// One Huawei app, selected by the message's `topic`. The secrets stay in their files; this holds only their paths.
public struct HuaweiApp: Sendable, Equatable {
    public var topic: String
    public var api: HuaweiAPI
    /// v1: the OAuth 2.0 client id, also the `<app_id>` of the send path.
    public var appID: String
    /// v1: the file holding the client secret (surrounding whitespace trimmed).
    public var clientSecretFile: String
    /// v3: the service account key file (JSON: `project_id`, `key_id`, `private_key`, `sub_account`, `token_uri`).
    public var serviceAccountFile: String
    /// The chat classification Huawei granted the app (`android.category` in v1, `notification.category` in v3),
    /// set on the notifications of chat messages unless the message's `huawei` object sets its own: without a
    /// granted class, Huawei counts chat pushes as marketing and caps them at a few a day per device.
    public var category: String
    /// The class of `kind: system` messages (such as `ACCOUNT`), and of messages on the bulk list; "" sends none
    /// (Huawei's default: marketing, under its quota). Huawei audits the class an app claims and can stop a wrong
    /// one's sends, so a broadcast never goes out as chat.
    public var systemCategory: String
    public var bulkCategory: String
    /// Huawei counts an app's rate in devices (tokens) per second: 6,000 is the floor it grants every app.
    public var tokensPerSecond: Int
    /// This app's Push Kit host where it differs from the block's `endpoint` (an app registered in another region,
    /// or another data site): `https://host[:port]`; "" for the block's.
    public var endpoint: String
    /// Receipts (`receipts.listen`): the file holding the HMAC secret of the app's receipt callback, and the
    /// callback's user name registered with it in Huawei's console. Both or neither; "" takes no receipts (and sends
    /// no receipt tag).
    public var receiptSecretFile: String
    public var receiptUserName: String

    public init(topic: String, api: HuaweiAPI = .v1, appID: String = "", clientSecretFile: String = "",
                serviceAccountFile: String = "", category: String = "IM", systemCategory: String = "", bulkCategory: String = "",
                tokensPerSecond: Int = 6000, endpoint: String = "", receiptSecretFile: String = "", receiptUserName: String = "") {
        self.topic = topic
        self.api = api
        self.appID = appID
        self.clientSecretFile = clientSecretFile
        self.serviceAccountFile = serviceAccountFile
        self.category = category
        self.systemCategory = systemCategory
        self.bulkCategory = bulkCategory
        self.tokensPerSecond = tokensPerSecond
        self.endpoint = endpoint
        self.receiptSecretFile = receiptSecretFile
        self.receiptUserName = receiptUserName
    }

    /// The app takes receipts: its requests carry a receipt tag and its callbacks are read.
    public var takesReceipts: Bool { !receiptSecretFile.isEmpty }
}

extension HuaweiApp {
    /// The category a message of `messageClass` is sent with ("" for none).
    public func category(for messageClass: MessageClass) -> String {
        switch messageClass {
        case .chat: return category
        case .system: return systemCategory
        case .bulk: return bulkCategory
        }
    }
}
