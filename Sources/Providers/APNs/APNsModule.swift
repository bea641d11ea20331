import Foundation
import ProviderKit
import PushCore

/// Apple Push Notification service as the worker builds it (`ProviderModule`, docs/transport.md): the default
/// provider, whose messages are those without `provider`. Its message rules, its `apns` block, its apps' lanes (one
/// per credential, apps sharing a key share them), its answers and its credential check. The worker names this
/// type once, in its list of providers.
public struct APNsModule: ProviderModule {
    public static let description = ProviderDescription(
        name: "apns",
        // One token a request; the 4 KB (5 KB for VoIP) limit is checked by its own rules.
        messageRules: AndroidVendorRules(maxPayloadBytes: 4096, tokensPerRequest: 1),
        parse: APNsMessageRules(),
        alertTexts: { payload, extraFields in APNsAlertText.texts(in: payload, extraFields: extraFields) },
        requestPreview: { message, _ in APNsRequestPreview.fields(of: message) },
        settingsKeys: ["endpoint", "ca_file", "connections", "max_connections", "event_loop", "transport_threads",
                       "request_timeout_ms", "credential_probe_max_ms", "transport", "ping_interval_ms"],
        appKeys: ["topic", "team_id", "key_id", "key_file", "cert_file", "cert_password"],
        secretFileAppKeys: ["key_file", "cert_file"],
        // The message, its token or its topic is wrong (docs/transport.md): a replay meets the same answer.
        permanentReasons: [
            "BadDeviceToken", "DeviceTokenNotForTopic", "PayloadTooLarge", "BadTopic", "TopicDisallowed", "BadCollapseId",
            "BadExpirationDate", "BadPriority", "MissingTopic", "BadMessageId", "InvalidPushType", "BadPath", "MissingDeviceToken",
        ],
        knownResponses: knownSeries.responses)

    /// The default provider (number 0): registered as such.
    public static var provider: PushProvider { PushProvider.registerDefault(description) }

    /// Apple's answers (docs/transport.md), the scheduler's retry reasons and each app's outcomes, at 0 from the
    /// first scrape.
    public static let knownSeries = KnownSeries(
        responses: [
            (200, ""), (400, "BadDeviceToken"), (400, "DeviceTokenNotForTopic"), (400, "BadCollapseId"),
            (400, "BadExpirationDate"), (400, "BadPriority"), (400, "BadTopic"), (400, "TopicDisallowed"),
            (403, "ExpiredProviderToken"), (403, "InvalidProviderToken"), (403, "BadCertificate"),
            (410, "Unregistered"), (410, "ExpiredToken"), (413, "PayloadTooLarge"), (429, "TooManyRequests"),
            (429, "TooManyProviderTokenUpdates"), (500, "InternalServerError"), (503, "ServiceUnavailable"),
            (0, "Timeout"), (0, "TransportError"), (0, "ConnectionError"),
        ],
        retries: [
            "ServiceUnavailable", "InternalServerError", "TooManyRequests", "TooManyProviderTokenUpdates",
            "ExpiredProviderToken", "InvalidProviderToken", "ProviderTokenUnavailable", "Timeout", "TransportError",
            "ConnectionError", "ConnectionLost", "RefusedStream", "GoawayUnprocessed", "NotSent", "ResentByLibcurl",
        ],
        outcomes: [
            ("feedback", "Unregistered"), ("feedback", "ExpiredToken"), ("feedback", "BadDeviceToken"),
            ("feedback", "DeviceTokenNotForTopic"),
            ("dead_letter", "ServiceUnavailable"), ("dead_letter", "InternalServerError"), ("dead_letter", "TooManyRequests"),
            ("dead_letter", "Timeout"), ("dead_letter", "TransportError"), ("dead_letter", "ConnectionError"),
            ("dead_letter", "Expired"),
        ])

    public let settings: APNsSettings

    public init(settings: APNsSettings) {
        self.settings = settings
    }

    /// Reads the `apns` block (docs/configuration.md); a bad value is an error naming its key.
    public init(block: ConfigurationBlock) throws {
        settings = try APNsSettings(block: block)
    }

    public var topics: [String] { settings.apps.map(\.topic) }

    public var caFile: String { settings.caFile }

    public var summaryLines: [String] {
        var lines = [
            "apns.endpoint: \(settings.endpoint.baseURL)",
            "apns.ca_file: \(settings.caFile.isEmpty ? "(system CAs)" : settings.caFile)",
            "apns.transport: \(settings.transport)",
            "apns.connections: \(settings.connections)",
            "apns.max_connections: \(settings.maxConnections)",
            "apns.ping_interval_ms: \(settings.pingIntervalMillis)",
            "apns.transport_threads: \(settings.transportThreads == 0 ? "(one per two cores; libcurl: one per core)" : String(settings.transportThreads))",
            "apns.request_timeout_ms: \(settings.requestTimeoutMillis)",
            "apns.credential_probe_max_ms: \(settings.credentialProbeMaxMillis)",
        ]
        for (index, app) in settings.apps.enumerated() {
            switch app.credential {
            case .token(let team, let key, let file):
                lines.append("apns.apps.\(index): \(app.topic), token auth, team_id \(team), key_id \(key), key_file \(file)")
            case .certificate(let file, let password):
                lines.append("apns.apps.\(index): \(app.topic), certificate \(file)\(password.isEmpty ? "" : ", cert_password ***")")
            }
        }
        return lines
    }

    /// Each credential gets lanes, each a thread with its own HTTP/2 client and its share of the connections; apps
    /// that share a .p8 key (or a certificate) share its lanes, its JWT and its connections (`alsoServes`).
    /// By default, with our own sessions, one lane per two cores: the transport takes about 60% of a worker's CPU
    /// and the stages the rest, and on two cores one lane did 10% more notifications/s than two, at less CPU each
    /// (each lane's thread then fills its TLS writes with more requests). libcurl costs several times more per
    /// request, so one of its lanes is CPU-bound sooner: one per core (docs/performance.md).
    public func makeLanes(_ context: LaneContext) throws -> [ProviderAppLanes] {
        let perCore = TransportKind(rawValue: settings.transport) == .libcurl ? context.cores : context.cores / 2
        let count = settings.transportThreads > 0 ? settings.transportThreads : max(1, min(settings.connections, perCore))
        var made: [ProviderAppLanes] = []
        var byCredential: [AppCredential: Int] = [:]
        for app in settings.apps {
            if let existing = byCredential[app.credential] {
                made[existing].alsoServes.append(app.topic)
                continue
            }
            var provider: ProviderToken?
            var certificate: (file: String, password: Secret)?
            switch app.credential {
            case .token(let teamID, let keyID, let keyFile):
                let signer = try JWTSigner(keyFile: keyFile, keyID: keyID, teamID: teamID)
                provider = ProviderToken(signer: signer, app: app.topic)
                _ = try provider?.current()  // fail at startup, not on the first message
            case .certificate(let file, let password):
                try ClientCertificate.validate(file: file, password: password.value)
                certificate = (file, password)
            }
            let lanes = try context.lanes(
                count: count,
                settings: { lane in transportSettings(app: app.topic, certificate: certificate, lane: lane, lanes: count) },
                service: { APNsService(provider: provider) })
            byCredential[app.credential] = made.count
            made.append(ProviderAppLanes(app: app.topic, lanes: lanes))
        }
        return made
    }

    /// One lane's share of the credential's connections (rounded up, at least one).
    private func transportSettings(app: String, certificate: (file: String, password: Secret)?, lane: Int, lanes: Int) -> TransportSettings {
        var transport = TransportSettings(baseURL: settings.endpoint.baseURL)
        transport.caFile = settings.caFile
        transport.share(connections: settings.connections, maxConnections: settings.maxConnections, lanes: lanes, lane: lane)
        transport.requestTimeoutMillis = settings.requestTimeoutMillis
        transport.credentialProbeLongestMillis = settings.credentialProbeMaxMillis
        transport.credentialProbeFirstMillis = min(1000, settings.credentialProbeMaxMillis)
        transport.app = app
        transport.socketAction = settings.eventLoop == "epoll"
        transport.driver = TransportKind(rawValue: settings.transport) ?? .nghttp2
        transport.pingIntervalMillis = settings.pingIntervalMillis
        if let certificate {
            transport.certificateFile = certificate.file
            transport.certificatePassword = certificate.password
        }
        return transport
    }

    /// Each app's key read and used to sign a JWT, or its certificate opened with its password, as the lanes do.
    public func checkCredentials() -> [(app: String, problem: String?, detail: String)] {
        settings.apps.map { app in
            do {
                return (app.topic, nil, try APNsCredentialCheck.verify(app))
            } catch {
                return (app.topic, "\(error)", "")
            }
        }
    }
}

extension PushProvider {
    /// Apple Push Notification service (docs/transport.md), the default provider, once its module is registered.
    public static let apns = APNsModule.provider
}
