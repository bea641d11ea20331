import Foundation
import Pusher
import PushCore

/// APNs as the `Pusher` starts it and `check-config` checks it (`ProviderApps`): its apps' lanes and credentials. Its
/// message rules and its `apns` block are still the core's (`MessageParser`, `ConfigurationLoader`), as the default
/// provider's; the worker names this type once, in its list of providers.
public struct APNsModule: ProviderApps {
    public static var provider: PushProvider { .apns }

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

    public var topics: [String] { settings.apps.map(\.topic) }

    public var caFile: String { settings.caFile }

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
        var boardLane = context.firstBoardLane
        do {
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
                let lanes = try context.startLanes(
                    count: count, firstLane: boardLane, credential: CredentialState(),
                    settings: { lane in transportSettings(app: app.topic, certificate: certificate, lane: lane, lanes: count) },
                    service: { APNsService(provider: provider) })
                byCredential[app.credential] = made.count
                made.append(ProviderAppLanes(app: app.topic, lanes: lanes))
                boardLane += lanes.count
            }
        } catch {
            made.forEach { $0.abort() }
            throw error
        }
        return made
    }

    /// One lane's share of the credential's connections (rounded up, at least one).
    private func transportSettings(app: String, certificate: (file: String, password: Secret)?, lane: Int, lanes: Int) -> TransportSettings {
        var transport = TransportSettings(baseURL: settings.endpoint.baseURL)
        transport.caFile = settings.caFile
        transport.initialConnections = max(1, (settings.connections + lanes - 1) / lanes)
        transport.connections = max(transport.initialConnections, (max(settings.maxConnections, settings.connections) + lanes - 1) / lanes)
        transport.requestTimeoutMillis = settings.requestTimeoutMillis
        transport.credentialProbeLongestMillis = settings.credentialProbeMaxMillis
        transport.credentialProbeFirstMillis = min(1000, settings.credentialProbeMaxMillis)
        transport.app = app
        transport.lane = lane
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
