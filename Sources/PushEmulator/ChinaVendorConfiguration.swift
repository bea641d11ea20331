import Foundation

/// The Huawei Push Kit and Xiaomi MiPush sides' settings (`EmulatorConfiguration.huawei`, `.xiaomi`). Defaults:
/// no app configured (every send is refused as the vendor refuses an unknown app), no faults.
extension EmulatorConfiguration {
    /// A Huawei Android app (Push Kit v1): its OAuth 2.0 client id (also the `/v1/<app_id>/` of the send path)
    /// and client secret.
    public struct HuaweiApp: Sendable {
        public var appID: String
        public var clientSecret: String
        /// Granted the right to send `android.urgency: HIGH` (without it: 80300011).
        public var highPriorityRight: Bool
        /// Where this app's receipts go (`HuaweiReceipts`); nil: none are sent.
        public var receipts: ReceiptTarget?
        public init(appID: String, clientSecret: String, highPriorityRight: Bool = false, receipts: ReceiptTarget? = nil) {
            self.appID = appID
            self.clientSecret = clientSecret
            self.highPriorityRight = highPriorityRight
            self.receipts = receipts
        }
    }

    /// A Huawei app's receipt callback as registered in its console: the URL, the HMAC secret and the user name the
    /// signature covers.
    public struct ReceiptTarget: Sendable {
        public var url: String
        public var secret: String
        public var userName: String
        public init(url: String, secret: String, userName: String) {
            self.url = url
            self.secret = secret
            self.userName = userName
        }
    }

    /// Tokens starting with one of these are accepted when sent (as the vendors accept a token whose app is gone), and
    /// their receipts say so: Huawei status 2 (uninstalled), Xiaomi type 16 (target invalid).
    public static let receiptDeadPrefixes = ["uninstalled"]

    /// A HarmonyOS service account (Push Kit v3): the project it sends for, its key id (the JWT's `kid`), its
    /// `sub_account` (the JWT's `iss`) and the key file (PEM, or the key JSON file with `private_key`).
    public struct HuaweiServiceAccount: Sendable {
        public var projectID: String
        public var keyID: String
        public var subAccount: String
        public var keyFile: String
        public init(projectID: String, keyID: String, subAccount: String, keyFile: String) {
            self.projectID = projectID
            self.keyID = keyID
            self.subAccount = subAccount
            self.keyFile = keyFile
        }

        /// The account of a Huawei service-account key JSON file (`project_id`, `key_id`, `sub_account`,
        /// `private_key`), trusted as it is.
        public init(keyJSONFile path: String) throws {
            guard let data = FileManager.default.contents(atPath: path),
                  let fields = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                  let project = fields["project_id"] as? String, let keyID = fields["key_id"] as? String,
                  let subAccount = fields["sub_account"] as? String, fields["private_key"] is String
            else {
                throw EmulatorError.configuration("\(path) is not a Huawei service account key file (project_id, key_id, sub_account, private_key)")
            }
            self.init(projectID: project, keyID: keyID, subAccount: subAccount, keyFile: path)
        }
    }

    /// Tokens starting with `prefix` (case-sensitive) are refused with `reason`: a v3 `illegalTokens` key
    /// (`noRight`, `tokenFormatError`, `tokenPlatformNotSupport`, ...); v1 lists every refused token in
    /// `illegal_tokens`. For Xiaomi the reason is only a label: every refused token goes to `bad_regids`.
    public struct VendorTokenAnswer: Sendable, Equatable {
        public var prefix: String
        public var reason: String
        public init(prefix: String, reason: String) {
            self.prefix = prefix
            self.reason = reason
        }

        public static let huaweiDefaults: [VendorTokenAnswer] = [
            .init(prefix: "unregistered", reason: "noRight"),
            .init(prefix: "invalid", reason: "tokenFormatError"),
            .init(prefix: "badtoken", reason: "tokenFormatError"),
            .init(prefix: "illegal", reason: "tokenFormatError"),
            .init(prefix: "platform", reason: "tokenPlatformNotSupport"),
        ]

        public static let xiaomiDefaults: [VendorTokenAnswer] = ["unregistered", "invalid", "badtoken", "illegal"]
            .map { .init(prefix: $0, reason: "bad_regid") }
    }

    public struct HuaweiSettings: Sendable {
        public var apps: [HuaweiApp] = []
        public var serviceAccounts: [HuaweiServiceAccount] = []
        /// Where the OAuth 2.0 token endpoint answers (Huawei's current path, and the older one).
        public var tokenPaths = ["/oauth2/v3/token", "/oauth2/v2/token"]
        /// The `aud` a v3 JWT must carry (also accepted: this emulator's own token URL as the request reached it).
        public var jwtAudience = "https://oauth-login.cloud.huawei.com/oauth2/v3/token"
        /// `expires_in` of the access tokens issued (Huawei: 3600).
        public var accessTokenLifetimeSeconds: Int64 = 3600
        public var tokenAnswers = VendorTokenAnswer.huaweiDefaults
        /// See `EmulatorConfiguration.receiptDeadPrefixes`.
        public var receiptDeadPrefixes = EmulatorConfiguration.receiptDeadPrefixes
        public var faults = VendorFaults()
        public init() {}
    }

    /// A Xiaomi app: the AppSecret of `Authorization: key=<AppSecret>` and the packages it may name in
    /// `restricted_package_name`.
    public struct XiaomiApp: Sendable {
        public var appSecret: String
        public var packages: [String]
        /// The channel ids registered in the console (`extra.channel_id`); empty: any channel id is accepted.
        public var channels: [String]
        /// Messages (one per regId) the app may send per Xiaomi day; then 10034 until the day rolls over. Nil:
        /// no quota.
        public var dailyQuota: Int?
        /// The private (chat) channels among `channels`: Xiaomi counts no quota for messages on them.
        public var privateChannels: [String]
        public init(appSecret: String, packages: [String], channels: [String] = [], dailyQuota: Int? = nil,
                    privateChannels: [String] = []) {
            self.appSecret = appSecret
            self.packages = packages
            self.channels = channels
            self.dailyQuota = dailyQuota
            self.privateChannels = privateChannels
        }
    }

    public struct XiaomiSettings: Sendable {
        public var apps: [XiaomiApp] = []
        /// When the quota day rolls over: `HH:MM` with a UTC offset. Beijing midnight is assumed, unverified.
        public var quotaReset = "00:00+08:00"
        public var tokenAnswers = VendorTokenAnswer.xiaomiDefaults
        /// See `EmulatorConfiguration.receiptDeadPrefixes`.
        public var receiptDeadPrefixes = EmulatorConfiguration.receiptDeadPrefixes
        public var faults = VendorFaults()
        public init() {}
    }
}
