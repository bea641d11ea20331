import Foundation
import PushEmulator
import PushCore

/// The emulator serving every provider for worker tests: APNs and FCM as `FCMStandIn` has them, and on its vendor
/// listener (HTTP/1.1 or h2 by ALPN) Huawei (an Android app with OAuth client credentials, a HarmonyOS app with a
/// service account key) and Xiaomi (an app with its private chat channel). The worker's environment configures one
/// app of each: `com.example.chat` for APNs, FCM, Huawei v1 and Xiaomi, `com.example.harmony` for Huawei v3.
public final class ChinaVendorStandIn: @unchecked Sendable {
    public static let topic = "com.example.chat"
    public static let harmonyTopic = "com.example.harmony"
    public static let huaweiAppID = "104123456"
    public static let xiaomiChannel = "im-private"
    public let stand: FCMStandIn
    public let huaweiSecretFile: String
    public let huaweiKeyFile: String
    public let xiaomiSecretFile: String
    /// The Xiaomi app's AppSecret (the emulator's key for its quota).
    public let xiaomiSecret = "xiaomi-app-secret-YmFy"

    /// Honor, OPPO and vivo apps too (`everyVendor`): their secrets' files, nil without them.
    public let honorSecretFile: String?
    public let oppoSecretFile: String?
    public let vivoSecretFile: String?
    public static let honorAppID = "104999888"
    public static let honorClientID = "104999888-client"
    public static let oppoAppKey = "oppo-app-key-test"
    public static let vivoAppID = "10004"
    public static let vivoAppKey = "vivo-app-key-test"

    public init(everyVendor: Bool = false, adjust: (inout EmulatorConfiguration) -> Void = { _ in }) async throws {
        let directory = makeTemporaryDirectory("vendors")
        let more = everyVendor ? (honor: "honor-client-secret", oppo: "oppo-master-secret", vivo: "vivo-app-secret") : nil
        if let more {
            honorSecretFile = directory + "/honor-secret.txt"
            oppoSecretFile = directory + "/oppo-secret.txt"
            vivoSecretFile = directory + "/vivo-secret.txt"
            try (more.honor + "\n").write(toFile: directory + "/honor-secret.txt", atomically: true, encoding: .utf8)
            try (more.oppo + "\n").write(toFile: directory + "/oppo-secret.txt", atomically: true, encoding: .utf8)
            try (more.vivo + "\n").write(toFile: directory + "/vivo-secret.txt", atomically: true, encoding: .utf8)
        } else {
            (honorSecretFile, oppoSecretFile, vivoSecretFile) = (nil, nil, nil)
        }
        let huaweiSecret = "c2VjcmV0LWZvci10ZXN0cw+/="  // Base64, as Huawei issues them (the emulator checks the form)
        let xiaomiSecret = self.xiaomiSecret
        huaweiSecretFile = directory + "/huawei-secret.txt"
        xiaomiSecretFile = directory + "/xiaomi-secret.txt"
        try (huaweiSecret + "\n").write(toFile: huaweiSecretFile, atomically: true, encoding: .utf8)
        try (xiaomiSecret + "\n").write(toFile: xiaomiSecretFile, atomically: true, encoding: .utf8)
        // A HarmonyOS service account: an RSA key in Huawei's key JSON, its JWTs addressed to Huawei's token URL.
        let pem = directory + "/huawei-private.pem"
        let made = try runCommand(which("openssl") ?? "/usr/bin/openssl",
                                  ["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", pem])
        guard made.status == 0 else { throw TestSetupError("openssl genpkey failed: \(made.output)") }
        huaweiKeyFile = directory + "/huawei-key.json"
        let key: [String: Any] = [
            "project_id": "388421841221234567", "key_id": "a1b2c3d4e5f6", "sub_account": "100123456",
            "private_key": try String(contentsOfFile: pem, encoding: .utf8),
            "token_uri": "https://oauth-login.cloud.huawei.com/oauth2/v3/token",
        ]
        try JSONSerialization.data(withJSONObject: key).write(to: URL(fileURLWithPath: huaweiKeyFile))
        let keyFile = huaweiKeyFile
        stand = try await FCMStandIn { configuration in
            configuration.vendorPort = 0
            configuration.huawei.apps = [.init(appID: Self.huaweiAppID, clientSecret: huaweiSecret)]
            configuration.huawei.serviceAccounts = [try! .init(keyJSONFile: keyFile)]
            configuration.xiaomi.apps = [.init(appSecret: xiaomiSecret, packages: [Self.topic], channels: [Self.xiaomiChannel])]
            if let more {
                configuration.honor.apps = [.init(appID: Self.honorAppID, clientID: Self.honorClientID, clientSecret: more.honor)]
                configuration.oppo.apps = [.init(appKey: Self.oppoAppKey, masterSecret: more.oppo)]
                configuration.vivo.apps = [.init(appID: Self.vivoAppID, appKey: Self.vivoAppKey, appSecret: more.vivo)]
            }
            adjust(&configuration)
        }
    }

    public var emulator: PushEmulator { stand.emulator }

    /// The worker's environment: Redis, APNs and FCM as `FCMStandIn`'s, and the `huawei` and `xiaomi` blocks.
    public func workerEnvironment(redis: RedisServer, _ extra: [String: String] = [:]) -> [String: String] {
        let vendor = emulator.vendorEndpoint
        var environment = stand.workerEnvironment(redis: redis, [
            "HUAWEI_ENDPOINT": vendor, "HUAWEI_TOKEN_URI": vendor + "/oauth2/v3/token", "HUAWEI_CA_FILE": stand.apns.caFile,
            "HUAWEI_APPS_0_TOPIC": Self.topic, "HUAWEI_APPS_0_API": "v1", "HUAWEI_APPS_0_APP_ID": Self.huaweiAppID,
            "HUAWEI_APPS_0_CLIENT_SECRET_FILE": huaweiSecretFile, "HUAWEI_APPS_0_CATEGORY": "IM",
            "HUAWEI_APPS_1_TOPIC": Self.harmonyTopic, "HUAWEI_APPS_1_API": "v3", "HUAWEI_APPS_1_SERVICE_ACCOUNT_FILE": huaweiKeyFile,
            "XIAOMI_ENDPOINT": vendor, "XIAOMI_CA_FILE": stand.apns.caFile,
            "XIAOMI_APPS_0_TOPIC": Self.topic, "XIAOMI_APPS_0_PACKAGE": Self.topic,
            "XIAOMI_APPS_0_APP_SECRET_FILE": xiaomiSecretFile, "XIAOMI_APPS_0_CHANNEL_ID": Self.xiaomiChannel,
        ])
        if let honorSecretFile, let oppoSecretFile, let vivoSecretFile {
            environment.merge([
                "HONOR_ENDPOINT": vendor, "HONOR_TOKEN_URI": vendor + "/auth/token", "HONOR_CA_FILE": stand.apns.caFile,
                "HONOR_APPS_0_TOPIC": Self.topic, "HONOR_APPS_0_APP_ID": Self.honorAppID, "HONOR_APPS_0_CLIENT_ID": Self.honorClientID,
                "HONOR_APPS_0_CLIENT_SECRET_FILE": honorSecretFile,
                "OPPO_ENDPOINT": vendor, "OPPO_CA_FILE": stand.apns.caFile, "OPPO_APPS_0_TOPIC": Self.topic,
                "OPPO_APPS_0_APP_KEY": Self.oppoAppKey, "OPPO_APPS_0_MASTER_SECRET_FILE": oppoSecretFile,
                "VIVO_ENDPOINT": vendor, "VIVO_CA_FILE": stand.apns.caFile, "VIVO_APPS_0_TOPIC": Self.topic,
                "VIVO_APPS_0_APP_ID": Self.vivoAppID, "VIVO_APPS_0_APP_KEY": Self.vivoAppKey, "VIVO_APPS_0_APP_SECRET_FILE": vivoSecretFile,
            ]) { $1 }
        }
        environment.merge(extra) { $1 }
        return environment
    }

    public func stop() async { await stand.stop() }
}

/// A vendor push token (printable ASCII, no spaces or commas) starting with `prefix`: the emulator refuses tokens
/// by prefix (`unregistered`, `badtoken`, ...).
public func vendorToken(_ prefix: String, _ n: Int) -> String {
    "\(prefix)\(n)-IQAAAACy0kYhAAB" + String(format: "%08d", n) + "Xk/9+Zq7=="
}

/// A message to a China vendor as a producer would LPUSH it.
public func vendorMessageJSON(id: String, provider: String, topic: String = ChinaVendorStandIn.topic, tokens: [String],
                              kind: String? = nil, body: String = "hello", extra: [String: Any] = [:]) -> String {
    var object: [String: Any] = ["id": id, "provider": provider, "topic": topic, "tokens": tokens,
                                 "payload": ["notification": ["title": "Alice", "body": body], "data": ["conversation": "c1"]]]
    if let kind { object["kind"] = kind }
    for (key, value) in extra { object[key] = value }
    let data = try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
    return String(decoding: data, as: UTF8.self)
}
