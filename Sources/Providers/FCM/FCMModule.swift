import Foundation
import ProviderKit
import PushCore

/// Firebase Cloud Messaging HTTP v1 as the worker builds it (`ProviderModule`, docs/fcm.md): its name and message
/// rules (FCM's `message` object as the payload, registration tokens), its `fcm` block, its apps' lanes (one access
/// token per service account, lanes per project) and its credential check. The worker names this type once, in
/// its list of providers.
public struct FCMModule: ProviderModule {
    /// The `fcm` block (docs/configuration.md), declared once: its keys, how each is read and shown (defaults:
    /// `FCMSettings`, `FCMApp`).
    public static let block = SettingsBlock<FCMSettings, FCMApp>(
        name: "fcm",
        keys: [.endpoint(\.endpoint), tokenURIKey, .caFile(\.caFile), .connections(\.connections),
               .maxConnections(\.maxConnections, connections: \.connections), .requestTimeout(\.requestTimeoutMillis),
               .number("ping_interval_ms", \.pingIntervalMillis, min: 100)],
        appKeys: [.text("topic", \.topic), .secretFile("service_account_file", \.serviceAccountFile),
                  .text("project_id", \.projectID, empty: .said("(the service account's)"))],
        settings: { FCMSettings() }, app: { FCMApp(topic: "", serviceAccountFile: "") },
        apps: \.apps, topic: \.topic,
        finishApp: { app, key in
            guard !app.serviceAccountFile.isEmpty else {
                throw ConfigurationError.invalid(key: key + ".service_account_file", reason: "is required (the service account's JSON key file)")
            }
            guard app.projectID.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" }) else {
                throw ConfigurationError.invalid(key: key + ".project_id",
                                                 reason: "'\(Printable.clipped(app.projectID, to: 80))' is not a project id (letters, digits, dashes)")
            }
        })

    /// The token endpoint for every service account, as a service account's `token_uri` is: https, or plain http to
    /// this machine only (`TokenURI`); empty: each file's own.
    static let tokenURIKey = SettingKey<FCMSettings>("token_uri", read: { settings, block, prefix in
        let tokenURI = block.string(prefix + "token_uri", settings.tokenURI).trimmingCharacters(in: .whitespaces)
        guard !tokenURI.isEmpty else { return }
        if let problem = TokenURI.problem(tokenURI) { throw ConfigurationError.invalid(key: block.fullKey(prefix + "token_uri"), reason: problem) }
        settings.tokenURI = tokenURI.hasSuffix("/") ? String(tokenURI.dropLast()) : tokenURI
    }, show: { $0.tokenURI.isEmpty ? "(each service account's token_uri)" : $0.tokenURI })

    public static let description = ProviderDescription(
        name: "fcm",
        // One token a request (HTTP v1 has no multicast); the 4,096-byte limit is checked by FCM's own rules.
        messageRules: AndroidVendorRules(maxPayloadBytes: 4096, tokensPerRequest: 1),
        parse: FCMMessageRules(),
        alertTexts: { payload, extraFields in FCMAlertText.texts(in: payload, extraFields: extraFields) },
        requestPreview: { message, now in
            let body = FCMRequestBody(payload: message.payload, expiration: message.headers.expiration, nowSeconds: now)
            return [("request", "POST /v1/projects/<project_id>/messages:send"),
                    ("body", String(decoding: body.body(token: message.tokens.first ?? "<token>"), as: UTF8.self))]
        },
        block: block,
        // The message or the token itself is wrong: a replay meets the same answer.
        permanentReasons: ["INVALID_ARGUMENT", "UNREGISTERED", "SENDER_ID_MISMATCH"],
        knownResponses: [
            (200, ""), (400, "INVALID_ARGUMENT"), (401, "UNAUTHENTICATED"), (401, "THIRD_PARTY_AUTH_ERROR"),
            (403, "SENDER_ID_MISMATCH"), (403, "PERMISSION_DENIED"), (404, "UNREGISTERED"), (429, "QUOTA_EXCEEDED"),
            (500, "INTERNAL"), (503, "UNAVAILABLE"), (0, "Timeout"), (0, "TransportError"), (0, "ConnectionError"),
        ])

    public let settings: FCMSettings

    public init(settings: FCMSettings) {
        self.settings = settings
    }

    /// Reads the `fcm` block (docs/configuration.md); a bad value is an error naming its key.
    public init(block: ConfigurationBlock) throws {
        settings = try Self.block.read(block)
    }

    public var topics: [String] { settings.apps.map(\.topic) }

    public var caFile: String { settings.caFile }

    public var summaryLines: [String] { Self.block.summaryLines(settings) }

    public func makeLanes(_ context: LaneContext) throws -> [ProviderAppLanes] {
        try FCMLanes.make(settings, context: context)
    }

    /// Each app: its service account loaded, an RS256 assertion signed, and one access token asked for (what
    /// `invalid_grant`, a clock off by minutes or a deleted key look like, before a deploy).
    public func checkCredentials() -> [(app: String, problem: String?, detail: String)] {
        settings.apps.map { app in
            do {
                return (app.topic, nil, try FCMCredentialCheck.verify(app, fcm: settings))
            } catch {
                return (app.topic, "\(error)", "")
            }
        }
    }
}

extension PushProvider {
    /// Firebase Cloud Messaging HTTP v1 (docs/fcm.md), once its module is registered.
    public static let fcm = FCMModule.provider
}
