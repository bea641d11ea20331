import AndroidPushKit
import ProviderKit
import PushCore

/// How an Honor app's lanes reach Honor Push (`VendorLanes`: h2 where offered, HTTP/1.1 otherwise), with room for an
/// answer that lists 1,000 tokens and the app's rate, shared by its lanes and across the fleet.
public enum HonorLanes {
    public static let responseBodyLimit = VendorLanes.responseBodyLimit(listing: 1000)

    /// The app's rate as the conservative reading of Honor's QPS has it: devices (tokens) a second.
    public static func rateLimit(for app: HonorApp) -> AppRateLimit {
        AppRateLimit(requestsPerSecond: nil, tokensPerSecond: app.tokensPerSecond,
                     fleet: FleetRateShares.process.share(provider: HonorModule.provider, app: app.topic,
                                                          requestsPerSecond: nil, tokensPerSecond: app.tokensPerSecond))
    }

    public static func transportSettings(for app: HonorApp, settings: HonorSettings, rateLimit: AppRateLimit,
                                         lanes: Int = 1, lane: Int = 0) -> TransportSettings {
        // The app's own host, where it has one.
        VendorLanes.transportSettings(
            baseURL: app.endpoint.isEmpty ? settings.endpoint : app.endpoint, caFile: settings.caFile, connections: settings.connections,
            maxConnections: settings.maxConnections, requestTimeoutMillis: settings.requestTimeoutMillis,
            responseBodyLimit: responseBodyLimit, rateLimit: rateLimit, app: app.topic, lanes: lanes, lane: lane)
    }
}
