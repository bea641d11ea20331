import Foundation
import Logging
import PushCore

/// Makes the scheduler lanes of every FCM app (docs/fcm.md): one access token per service account
/// (`AccessTokenCache`, shared by all its apps, lanes and requests), and lanes per project, each a thread with
/// its own HTTP/2 client (our nghttp2 sessions: streams exact to FCM's SETTINGS, 100 per connection).
enum FCMLanes {
    /// Loads each app's service account (a missing or malformed file is a startup error), starts its access
    /// token's renewal, and appends the lanes to `transports`, their indices to `routes` (by topic).
    static func make(_ fcm: FCMSettings, retry: RetrySettings, cores: Int, logger: Logger, readiness: Readiness?,
                     lease: OwnershipLease, waitBoard: AppWaitBoard?, sink: @escaping @Sendable ([Resolution]) -> Void,
                     transports: inout [Scheduler], routes: inout [String: [Int]],
                     appLanes: inout [(app: String, provider: PushProvider, lanes: [Int])],
                     caches: inout [AccessTokenCache]) throws {
        guard fcm.isEnabled else { return }
        let lanes = max(1, min(fcm.connections, cores / 2))
        var byFile: [String: (account: ServiceAccount, cache: AccessTokenCache, readiness: AccessTokenReadiness)] = [:]
        var byProject: [String: [Int]] = [:]
        for app in fcm.apps {
            let entry: (account: ServiceAccount, cache: AccessTokenCache, readiness: AccessTokenReadiness)
            if let known = byFile[app.serviceAccountFile] {
                entry = known
                known.readiness.add(app: app.topic)
            } else {
                let account = try ServiceAccount.load(path: app.serviceAccountFile)
                let tokenReadiness = AccessTokenReadiness(readiness: readiness, app: app.topic)
                let cache = try accessTokens(for: account, app: app.topic, fcm: fcm, readiness: tokenReadiness)
                caches.append(cache)
                entry = (account, cache, tokenReadiness)
                byFile[app.serviceAccountFile] = entry
            }
            let project = app.projectID.isEmpty ? entry.account.projectID : app.projectID
            let key = "\(app.serviceAccountFile)\u{1}\(project)"
            if let existing = byProject[key] {
                routes[app.topic] = existing
                continue
            }
            var settings = TransportSettings(baseURL: fcm.endpoint)
            settings.caFile = fcm.caFile
            settings.driver = .nghttp2
            // Apple's one-stream-until-success rule is APNs's: FCM allows its SETTINGS (100) from the first request.
            settings.streamsBeforeFirstSuccess = nil
            settings.initialConnections = max(1, (fcm.connections + lanes - 1) / lanes)
            settings.connections = max(settings.initialConnections, (max(fcm.maxConnections, fcm.connections) + lanes - 1) / lanes)
            settings.requestTimeoutMillis = fcm.requestTimeoutMillis
            settings.pingIntervalMillis = fcm.pingIntervalMillis
            settings.retry = retry
            settings.app = app.topic
            settings.waitBoard = waitBoard
            let credential = CredentialState()
            let indices = Array(transports.count..<transports.count + lanes)
            for lane in 0..<lanes {
                settings.lane = lane
                settings.boardLane = transports.count
                let service = FCMService(projectID: project, tokens: entry.cache)
                transports.append(try Scheduler(settings: settings, service: service, readiness: readiness, logger: logger,
                                                credential: credential, lease: lease, sink: sink))
            }
            entry.cache.wakeOnChange(transports[indices.first!...indices.last!].map { $0 })
            byProject[key] = indices
            routes[app.topic] = indices
            appLanes.append((app.topic, .fcm, indices))
        }
    }

    /// The access token of one service account: its assertion signed with the account's key, posted to
    /// `fcm.token_uri` or the file's `token_uri`; every request counted in `push_fcm_access_token_renewals_total`,
    /// and a refusal told to readiness as soon as the endpoint says it (`AccessTokenReadiness`).
    static func accessTokens(for account: ServiceAccount, app: String, fcm: FCMSettings, readiness: AccessTokenReadiness,
                             refusedRetrySeconds: Double = 60) throws -> AccessTokenCache {
        let source = try AccessTokenSource(account: account, fcm: fcm, timeoutMillis: fcm.requestTimeoutMillis)
        // A key that cannot sign is a startup error, not a paused app.
        _ = try source.signer.assertion(issuedAt: WallClock.nowSeconds())
        let metrics = ServiceMetrics.fcm
        metrics.registerAccessTokenSeries(app: app)
        return AccessTokenCache(name: account.clientEmail, refusedRetrySeconds: refusedRetrySeconds, onChange: readiness.changed) { stopping in
            let grant = source.exchange(abandon: stopping)
            if case .granted = grant { metrics.accessTokenRenewal(app: app, ok: true) } else { metrics.accessTokenRenewal(app: app, ok: false) }
            return grant
        }
    }
}
