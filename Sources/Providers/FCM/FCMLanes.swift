import Foundation
import Logging
import ProviderKit
import PushCore

/// Makes the scheduler lanes of every FCM app (docs/fcm.md): one access token per service account
/// (`AccessTokenCache`, shared by all its apps, lanes and requests), and lanes per project, each a thread with
/// its own HTTP/2 client (our nghttp2 sessions: streams exact to FCM's SETTINGS, 100 per connection). Apps of one
/// service account and project share its lanes.
enum FCMLanes {
    /// Loads each app's service account (a missing or malformed file is a startup error), starts its access
    /// token's renewal, and starts the lanes of each project. On an error, what it started is stopped first.
    static func make(_ fcm: FCMSettings, context: LaneContext) throws -> [ProviderAppLanes] {
        guard fcm.isEnabled else { return [] }
        let count = context.laneCount(connections: fcm.connections)
        var byFile: [String: (account: ServiceAccount, cache: AccessTokenCache, readiness: AccessTokenReadiness)] = [:]
        // The project's entry in `made`, by service account file and project.
        var byProject: [String: Int] = [:]
        var made: [ProviderAppLanes] = []
        var caches: [AccessTokenCache] = []
        do {
            for app in fcm.apps {
                let entry: (account: ServiceAccount, cache: AccessTokenCache, readiness: AccessTokenReadiness)
                if let known = byFile[app.serviceAccountFile] {
                    entry = known
                    known.readiness.add(app: app.topic)
                } else {
                    let account = try ServiceAccount.load(path: app.serviceAccountFile)
                    let tokenReadiness = AccessTokenReadiness(readiness: context.readiness, app: app.topic, service: "FCM")
                    let cache = try accessTokens(for: account, app: app.topic, fcm: fcm, readiness: tokenReadiness)
                    caches.append(cache)
                    entry = (account, cache, tokenReadiness)
                    byFile[app.serviceAccountFile] = entry
                }
                let project = app.projectID.isEmpty ? entry.account.projectID : app.projectID
                let key = "\(app.serviceAccountFile)\u{1}\(project)"
                if let existing = byProject[key] {
                    made[existing].alsoServes.append(app.topic)
                    continue
                }
                let lanes = try context.lanes(
                    count: count,
                    settings: { lane in transportSettings(fcm, app: app.topic, lanes: count, lane: lane) },
                    service: { FCMService(projectID: project, tokens: entry.cache) })
                byProject[key] = made.count
                made.append(ProviderAppLanes(app: app.topic, lanes: lanes, started: { [cache = entry.cache] in cache.wakeOnChange($0) }))
            }
        } catch {
            caches.forEach { $0.stop() }
            throw error
        }
        // The tokens end after every lane (the worker shuts the lanes down first); every project has lanes, so the
        // first app's entry carries them.
        if !made.isEmpty {
            let all = caches
            made[0].shutdown = { @Sendable in for cache in all { await cache.shutdown() } }
            made[0].stop = { @Sendable in all.forEach { $0.stop() } }
        }
        return made
    }

    /// One lane's transport settings: FCM's endpoint and connections, shared among the project's lanes.
    static func transportSettings(_ fcm: FCMSettings, app: String, lanes: Int, lane: Int) -> TransportSettings {
        var settings = TransportSettings(baseURL: fcm.endpoint)
        settings.caFile = fcm.caFile
        settings.driver = .nghttp2
        // Apple's one-stream-until-success rule is Apple's alone: FCM allows its SETTINGS (100) from the first request.
        settings.streamsBeforeFirstSuccess = nil
        settings.share(connections: fcm.connections, maxConnections: fcm.maxConnections, lanes: lanes, lane: lane)
        settings.requestTimeoutMillis = fcm.requestTimeoutMillis
        settings.pingIntervalMillis = fcm.pingIntervalMillis
        settings.app = app
        return settings
    }

    /// The access token of one service account: its assertion signed with the account's key, posted to
    /// `fcm.token_uri` or the file's `token_uri`; every request counted in `push_provider_access_token_renewals_total{provider="fcm"}`,
    /// and a refusal told to readiness as soon as the endpoint says it (`AccessTokenReadiness`).
    static func accessTokens(for account: ServiceAccount, app: String, fcm: FCMSettings, readiness: AccessTokenReadiness,
                             refusedRetrySeconds: Double = 60) throws -> AccessTokenCache {
        let source = try AccessTokenSource(account: account, fcm: fcm, timeoutMillis: fcm.requestTimeoutMillis)
        // A key that cannot sign is a startup error, not a paused app.
        _ = try source.signer.assertion(issuedAt: WallClock.nowSeconds())
        let metrics = ServiceMetrics.of(.fcm)
        metrics.registerAccessTokenSeries(app: app)
        return AccessTokenCache(name: account.clientEmail, service: "FCM", refusedRetrySeconds: refusedRetrySeconds, onChange: readiness.changed) { stopping in
            let grant = source.exchange(abandon: stopping)
            if case .granted = grant { metrics.accessTokenRenewal(app: app, ok: true) } else { metrics.accessTokenRenewal(app: app, ok: false) }
            return grant
        }
    }
}
