import AndroidPushKit
import PushCore

/// The `vivo` block of the configuration: where vivo Push is, how many connections an app keeps, when its quota day
/// rolls over, and the apps.
public struct VivoSettings: Sendable, Equatable {
    /// vivo's one documented host (no overseas host was found).
    public static let defaultEndpoint = "https://api-push.vivo.com.cn"

    public var endpoint = VivoSettings.defaultEndpoint
    public var caFile = ""
    public var connections = 2
    public var maxConnections = 64
    public var requestTimeoutMillis = 10_000
    /// When a vivo day (and a spent daily quota: 10070, 10252) rolls over: Beijing midnight assumed (unverified).
    public var quotaReset = "00:00+08:00"
    public var apps: [VivoApp] = []

    public init(apps: [VivoApp] = []) {
        self.apps = apps
    }

    public var isEnabled: Bool { !apps.isEmpty }
}

/// One vivo app: the `topic` messages name with `"provider": "vivo"`, its AppID, AppKey and AppSecret (in a file,
/// for the auth token), its class per message class (`classification` 1 system / 0 operation, and `category`) and
/// its rate.
public struct VivoApp: Sendable, Equatable {
    /// vivo's lowest QPS tier (apps under 5 million notification-enabled users, aggregators' figure).
    public static let defaultRequestsPerSecond = 3000

    public var topic: String
    public var appID: String
    public var appKey: String
    public var appSecretFile: String
    /// Chat: `classification` 1 (system: no per-device cap) with `category` `IM`; system: 1 with no category by
    /// default; bulk: 0 (operation, capped per device a day). A category must match its classification (10097).
    public var classification: Int
    public var category: String
    public var systemClassification: Int
    public var systemCategory: String
    public var bulkClassification: Int
    public var bulkCategory: String
    public var requestsPerSecond: Int

    public init(topic: String, appID: String = "", appKey: String = "", appSecretFile: String = "", classification: Int = 1,
                category: String = "IM", systemClassification: Int = 1, systemCategory: String = "", bulkClassification: Int = 0,
                bulkCategory: String = "", requestsPerSecond: Int = VivoApp.defaultRequestsPerSecond) {
        self.topic = topic
        self.appID = appID
        self.appKey = appKey
        self.appSecretFile = appSecretFile
        self.classification = classification
        self.category = category
        self.systemClassification = systemClassification
        self.systemCategory = systemCategory
        self.bulkClassification = bulkClassification
        self.bulkCategory = bulkCategory
        self.requestsPerSecond = requestsPerSecond
    }

    public func messageClass(_ messageClass: MessageClass) -> (classification: Int, category: String) {
        (ClassValues(chat: classification, system: systemClassification, bulk: bulkClassification)[messageClass],
         ClassValues(chat: category, system: systemCategory, bulk: bulkCategory)[messageClass])
    }

    /// `appId` as vivo takes it: a number (its console's ids are), else the text as given.
    var appIDValue: JSONValue {
        !appID.isEmpty && appID.utf8.count <= 18 && appID.allSatisfy(\.isASCIIDigit) ? .number(appID) : .string(appID)
    }
}

extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}
