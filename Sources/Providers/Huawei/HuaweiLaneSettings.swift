import AndroidPushKit
import ProviderKit
import PushCore

/// How a Huawei app's lanes reach Push Kit: our own HTTP/2 sessions where the server offers h2 by ALPN, libcurl's
/// HTTP/1.1 keep-alive pool otherwise (Huawei documents HTTP/1.1 only; `fallsBackToHTTP1`), the app's share of `huawei.connections` and `max_connections`, the
/// request timeout, room for an answer that lists 1,000 bad tokens, and the app's rate as Huawei counts it: devices
/// (tokens) per second, in one bucket shared by all the app's lanes.
public enum HuaweiLaneSettings {
    /// The longest answer kept: 1,000 listed tokens of up to 1,024 bytes each, with the quotes, commas and escapes
    /// of JSON inside `msg`'s string, and room for the rest. A longer answer would be cut, fail to parse, and be
    /// retried as an answer that says nothing.
    public static let responseBodyLimit = 1000 * (1024 + 8) + 16 * 1024

    /// The app's rate limit: one per app, handed to each of its lanes (`transportSettings(rateLimit:)`), so that
    /// the lanes draw from one bucket, and an over-rate answer (HTTP 503) to any lane lowers the rate of all; the
    /// bucket is the app's share of its budget across the fleet, which every worker draws from.
    public static func rateLimit(for app: HuaweiApp) -> AppRateLimit {
        AppRateLimit(requestsPerSecond: nil, tokensPerSecond: app.tokensPerSecond,
                     fleet: FleetRateShares.process.share(provider: HuaweiModule.provider, app: app.topic,
                                                          requestsPerSecond: nil, tokensPerSecond: app.tokensPerSecond))
    }

    /// The settings of lane `lane` of `lanes` for `app`. Connections are split among the lanes as every module's are: each
    /// opens its share of `connections` at start and grows to its share of `max_connections`. What belongs to the
    /// worker rather than to Huawei (the wait board and the lane's number on it, a test's clock) is the caller's to set.
    public static func transportSettings(for app: HuaweiApp, settings: HuaweiSettings, rateLimit: AppRateLimit,
                                         lanes: Int = 1, lane: Int = 0, retry: RetrySettings = RetrySettings()) -> TransportSettings {
        var transport = VendorLanes.transportSettings(
            baseURL: app.endpoint.isEmpty ? settings.endpoint : app.endpoint, caFile: settings.caFile, connections: settings.connections,
            maxConnections: settings.maxConnections, requestTimeoutMillis: settings.requestTimeoutMillis,
            responseBodyLimit: responseBodyLimit, rateLimit: rateLimit, app: app.topic, lanes: lanes, lane: lane)
        transport.retry = retry
        return transport
    }
}
