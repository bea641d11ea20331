import AndroidPushKit
import ProviderKit
import PushCore

/// The transport side of a Xiaomi app's lanes: the `TransportSettings` a `Scheduler` lane runs with, and the
/// app's rate limit every lane of it shares. The only file of the module that needs Pusher (where
/// `TransportSettings` and `AppRateLimit` live); the service itself needs only ProviderKit and PushCore.
public enum XiaomiLanes {
    /// The longest answer body a lane keeps: a success that names every regId of a request of 1,000 bad, each
    /// up to 1,024 bytes (the longest vendor token) and each character escaped in the JSON at worst, and room for
    /// the rest of the answer. An answer cut short would lose the list and be retried whole (`NotMiPush`). The
    /// driver grows its buffer only as an answer needs it, so the limit costs nothing until then.
    public static let responseBodyLimit = XiaomiService.maxRegIDsPerRequest * (2 * 1024 + 1) + 16_384

    /// The app's rate as Xiaomi counts it: requests per second (`requests_per_s`), not tokens. Make one per app
    /// and give it to each of the app's lanes: the lanes share its buckets, and a 10027 on one lowers them all. The
    /// buckets are the app's share of its budget across the fleet, which every worker draws from.
    public static func rateLimit(for app: XiaomiApp) -> AppRateLimit {
        AppRateLimit(requestsPerSecond: app.requestsPerSecond, tokensPerSecond: nil,
                     fleet: FleetRateShares.process.share(provider: XiaomiModule.provider, app: app.topic,
                                                          requestsPerSecond: app.requestsPerSecond, tokensPerSecond: nil))
    }

    /// The settings of lane `lane` of `lanes` for `app`: our own HTTP/2 sessions where MiPush offers h2 by ALPN
    /// (Xiaomi's own SDK is HTTP/2), libcurl's HTTP/1.1 keep-alive pool otherwise (`fallsBackToHTTP1`); the app's connections shared among its
    /// lanes as every module's are; MiPush's stream limits taken as its SETTINGS say from the first request (Apple's
    /// one-stream-until-authenticated rule is Apple's alone). The caller sets what is the worker's, not Xiaomi's:
    /// `retry`, `waitBoard`, `boardLane`, and `offersHTTP2` where a deployment must stay on HTTP/1.1.
    public static func transportSettings(for app: XiaomiApp, in settings: XiaomiSettings, rateLimit: AppRateLimit,
                                         lane: Int = 0, lanes: Int = 1) -> TransportSettings {
        // The app's own region, where it has one.
        VendorLanes.transportSettings(
            baseURL: app.endpoint.isEmpty ? settings.endpoint : app.endpoint, caFile: settings.caFile, connections: settings.connections,
            maxConnections: settings.maxConnections, requestTimeoutMillis: settings.requestTimeoutMillis,
            responseBodyLimit: responseBodyLimit, rateLimit: rateLimit, app: app.topic, lanes: lanes, lane: lane)
    }
}
