import FCMProvider
import PushEmulator
import Foundation
import PushCore

/// The emulator serving FCM for worker tests: a service account it trusts (`account`, project
/// `example-project`), its token endpoint, and `messages:send` on a listener of its own that allows 100
/// streams per connection, as FCM does. `adjust` sets faults and lifetimes before it starts.
public final class FCMStandIn: @unchecked Sendable {
    public static let topic = "com.example.chat"
    public let account: ServiceAccountFixture
    public let apns: EmulatorStandIn
    public let serviceAccountFile: String

    public init(adjust: (inout EmulatorConfiguration) -> Void = { _ in }) async throws {
        let account = try ServiceAccountFixture()
        self.account = account
        apns = try await EmulatorStandIn { configuration in
            configuration.fcmServiceAccounts = [account.trusted]
            configuration.fcmPort = 0
            adjust(&configuration)
        }
        serviceAccountFile = try account.writeJSON(tokenURI: apns.emulator.endpoint + "/token")
    }

    public var emulator: PushEmulator { apns.emulator }
    public var fcm: FCMSide { apns.emulator.fcm }

    /// The worker's environment: Redis, APNs (com.example.chat) and FCM (com.example.chat) on this emulator.
    public func workerEnvironment(redis: RedisServer, _ extra: [String: String] = [:]) -> [String: String] {
        var environment = apns.workerEnvironment(redis: redis, [
            "FCM_ENDPOINT": emulator.fcmEndpoint, "FCM_CA_FILE": apns.caFile,
            "FCM_APPS_0_TOPIC": Self.topic, "FCM_APPS_0_SERVICE_ACCOUNT_FILE": serviceAccountFile,
        ])
        environment.merge(extra) { $1 }
        return environment
    }

    public func stop() async { await apns.stop() }
}

/// An FCM registration token shaped like Google's (an instance id, a colon, `APA91b` and Base64url), starting
/// with `prefix` (the emulator answers by prefix: `unregistered`, `badtoken`, `quota`...).
public func fcmToken(_ prefix: String = "d", _ n: Int) -> String {
    "\(prefix)\(n)Zq7:APA91b" + String(repeating: "Xk_9-", count: 24) + String(format: "%06d", n)
}

/// An FCM message as a producer would LPUSH it.
public func fcmMessageJSON(id: String, tokens: [String], kind: String? = nil, body: String = "hello",
                           topic: String = FCMStandIn.topic, extra: [String: Any] = [:]) -> String {
    _ = PushProvider.fcm  // whoever parses it needs FCM's rules registered
    var object: [String: Any] = ["id": id, "provider": "fcm", "topic": topic, "tokens": tokens,
                                 "payload": ["notification": ["body": body], "data": ["conversation": "c1"]]]
    if let kind { object["kind"] = kind }
    for (key, value) in extra { object[key] = value }
    let data = try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
    return String(decoding: data, as: UTF8.self)
}

extension WorkerConfiguration {
    /// The `fcm` block as FCM's module reads it at start-up (its mistakes thrown, naming the key).
    public func fcmSettings() throws -> FCMSettings {
        _ = PushProvider.fcm
        return try FCMModule(block: providerBlocks["fcm"] ?? ConfigurationBlock(name: "fcm")).settings
    }
}
