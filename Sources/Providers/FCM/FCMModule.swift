import Foundation
import ProviderKit
import PushCore

/// Firebase Cloud Messaging HTTP v1 as the worker builds it (`ProviderModule`, docs/fcm.md): its name and message
/// rules (FCM's `message` object as the payload, registration tokens), its `fcm` block, its apps' lanes (one access
/// token per service account, lanes per project) and its credential check. The worker names this type once, in
/// its list of providers.
public struct FCMModule: ProviderModule {
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
        settingsKeys: ["endpoint", "token_uri", "ca_file", "connections", "max_connections", "request_timeout_ms", "ping_interval_ms"],
        appKeys: ["topic", "service_account_file", "project_id"],
        secretFileAppKeys: ["service_account_file"],
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
        var fcm = FCMSettings()
        fcm.endpoint = try block.httpsURL("endpoint", fcm.endpoint)
        let tokenURI = block.string("token_uri", "").trimmingCharacters(in: .whitespaces)
        if !tokenURI.isEmpty {
            // As a service account's token_uri: https, or plain http to this machine only (TokenURI).
            if let problem = TokenURI.problem(tokenURI) { throw ConfigurationError.invalid(key: block.fullKey("token_uri"), reason: problem) }
            fcm.tokenURI = tokenURI.hasSuffix("/") ? String(tokenURI.dropLast()) : tokenURI
        }
        fcm.caFile = block.string("ca_file", "")
        fcm.connections = try block.int("connections", fcm.connections, min: 1, max: 1024)
        fcm.maxConnections = try block.int("max_connections", max(fcm.maxConnections, fcm.connections), min: fcm.connections, max: 1024)
        fcm.requestTimeoutMillis = try block.int("request_timeout_ms", fcm.requestTimeoutMillis, min: 1)
        fcm.pingIntervalMillis = try block.int("ping_interval_ms", fcm.pingIntervalMillis, min: 100)
        var topics = Set<String>()
        for index in block.appIndices {
            let base = "apps.\(index)"
            let topic = block.string("\(base).topic", "").trimmingCharacters(in: .whitespaces)
            guard !topic.isEmpty else { throw ConfigurationError.invalid(key: block.fullKey("\(base).topic"), reason: "is required") }
            guard topics.insert(topic).inserted else {
                throw ConfigurationError.invalid(key: block.fullKey("\(base).topic"), reason: "'\(Printable.clipped(topic, to: 80))' is listed twice")
            }
            let file = block.string("\(base).service_account_file", "").trimmingCharacters(in: .whitespaces)
            guard !file.isEmpty else {
                throw ConfigurationError.invalid(key: block.fullKey("\(base).service_account_file"),
                                                 reason: "is required (the service account's JSON key file)")
            }
            let project = block.string("\(base).project_id", "").trimmingCharacters(in: .whitespaces)
            guard project.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" }) else {
                throw ConfigurationError.invalid(key: block.fullKey("\(base).project_id"),
                                                 reason: "'\(Printable.clipped(project, to: 80))' is not a project id (letters, digits, dashes)")
            }
            fcm.apps.append(FCMApp(topic: topic, serviceAccountFile: file, projectID: project))
        }
        settings = fcm
    }

    public var topics: [String] { settings.apps.map(\.topic) }

    public var caFile: String { settings.caFile }

    public var summaryLines: [String] {
        [
            "fcm.endpoint: \(settings.endpoint)",
            "fcm.token_uri: \(settings.tokenURI.isEmpty ? "(each service account's token_uri)" : settings.tokenURI)",
            "fcm.ca_file: \(settings.caFile.isEmpty ? "(system CAs)" : settings.caFile)",
            "fcm.connections: \(settings.connections)",
            "fcm.max_connections: \(settings.maxConnections)",
            "fcm.request_timeout_ms: \(settings.requestTimeoutMillis)",
            "fcm.ping_interval_ms: \(settings.pingIntervalMillis)",
        ] + settings.apps.enumerated().map { index, app in
            "fcm.apps.\(index): \(app.topic), service_account_file \(app.serviceAccountFile)"
                + (app.projectID.isEmpty ? ", project_id (the service account's)" : ", project_id \(app.projectID)")
        }
    }

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
