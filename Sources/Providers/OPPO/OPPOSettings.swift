import AndroidPushKit
import PushCore

/// The `oppo` block of the configuration: where OPPO Push (OPUSH) is, how many connections an app keeps, when its
/// quota day rolls over, and the apps.
public struct OPPOSettings: Sendable, Equatable {
    /// The mainland host; `https://api-intl.push.oppomobile.com` serves phones registered overseas (a regId with a
    /// region prefix other than `CN_`), as an app's own `endpoint`.
    public static let defaultEndpoint = "https://api.push.oppomobile.com"
    /// Beijing midnight: assumed (unverified), as for the other vendors' quota days.
    public static let defaultQuotaReset = "00:00+08:00"

    public var endpoint = OPPOSettings.defaultEndpoint
    public var caFile = ""
    public var connections = 2
    public var maxConnections = 64
    public var requestTimeoutMillis = 10_000
    /// When an OPPO day (and with it a spent daily quota, code 33) rolls over: `HH:MM` and a UTC offset.
    public var quotaReset = OPPOSettings.defaultQuotaReset
    public var apps: [OPPOApp] = []

    public init(apps: [OPPOApp] = []) {
        self.apps = apps
    }

    public var isEnabled: Bool { !apps.isEmpty }
}

/// One OPPO app: the `topic` messages name with `"provider": "oppo"`, its AppKey and MasterSecret (in a file, for
/// the daily auth token), its class per message class (`category` with `notify_level`, and the channel registered
/// in OPPO's console) and its rate.
public struct OPPOApp: Sendable, Equatable {
    /// OPPO's lowest QPS tier (apps under 10 million cumulative users, aggregators' figure).
    public static let defaultRequestsPerSecond = 5000

    public var topic: String
    public var appKey: String
    public var masterSecretFile: String
    /// Chat: `category` `IM` (OPPO's communication-and-service class, which needs OPPO's approval), and
    /// `notify_level` 2 (the shade and the lock screen; 16 adds a banner, ringtone and vibration, for chat apps OPPO
    /// allows). A `notify_level` needs a `category`; 0 sends none.
    public var category: String
    public var notifyLevel: Int
    public var systemCategory: String
    public var systemNotifyLevel: Int
    /// Bulk: no category by default (OPPO's content-and-marketing class, capped per device a day).
    public var bulkCategory: String
    public var bulkNotifyLevel: Int
    /// The notification channels registered in OPPO's console (Android 8+), per class; "" sends none.
    public var channelID: String
    public var systemChannelID: String
    public var bulkChannelID: String
    public var requestsPerSecond: Int
    /// This app's host where it differs from the block's (`https://api-intl.push.oppomobile.com` overseas).
    public var endpoint: String

    public init(topic: String, appKey: String = "", masterSecretFile: String = "", category: String = "IM", notifyLevel: Int = 2,
                systemCategory: String = "", systemNotifyLevel: Int = 0, bulkCategory: String = "", bulkNotifyLevel: Int = 0,
                channelID: String = "", systemChannelID: String = "", bulkChannelID: String = "",
                requestsPerSecond: Int = OPPOApp.defaultRequestsPerSecond, endpoint: String = "") {
        self.topic = topic
        self.appKey = appKey
        self.masterSecretFile = masterSecretFile
        self.category = category
        self.notifyLevel = notifyLevel
        self.systemCategory = systemCategory
        self.systemNotifyLevel = systemNotifyLevel
        self.bulkCategory = bulkCategory
        self.bulkNotifyLevel = bulkNotifyLevel
        self.channelID = channelID
        self.systemChannelID = systemChannelID
        self.bulkChannelID = bulkChannelID
        self.requestsPerSecond = requestsPerSecond
        self.endpoint = endpoint
    }

    /// The class a message of `messageClass` is sent with: its category, its notify level (0: none) and its channel.
    public func messageClass(_ messageClass: MessageClass) -> (category: String, notifyLevel: Int, channelID: String) {
        (ClassValues(chat: category, system: systemCategory, bulk: bulkCategory)[messageClass],
         ClassValues(chat: notifyLevel, system: systemNotifyLevel, bulk: bulkNotifyLevel)[messageClass],
         ClassValues(chat: channelID, system: systemChannelID, bulk: bulkChannelID)[messageClass])
    }
}
