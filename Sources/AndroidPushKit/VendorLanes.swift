import ProviderKit
import PushCore

/// How an Android vendor app's lanes reach the vendor: our own HTTP/2 sessions where the server offers h2 by ALPN,
/// libcurl's HTTP/1.1 keep-alive pool otherwise (most vendors document HTTP/1.1 only; `fallsBackToHTTP1`), the
/// app's share of its block's connections, the request timeout, room for an answer that lists a whole batch of bad
/// tokens, and the app's rate as the vendor counts it, in buckets all the app's lanes share. What belongs to the
/// worker (the retry rules, the wait board, a test's clock) is the Pusher's or the caller's to set.
public enum VendorLanes {
    /// The settings of lane `lane` of `lanes` for one app.
    /// - Parameters:
    ///   - baseURL: the app's region where it has one, else the block's `endpoint`.
    ///   - responseBodyLimit: the longest answer kept: one that lists every token of a request must fit, or it is
    ///     cut, fails to parse and is retried as an answer that says nothing.
    public static func transportSettings(baseURL: String, caFile: String, connections: Int, maxConnections: Int,
                                         requestTimeoutMillis: Int, responseBodyLimit: Int, rateLimit: AppRateLimit,
                                         app: String, lanes: Int, lane: Int) -> TransportSettings {
        var transport = TransportSettings(baseURL: baseURL)
        transport.caFile = caFile
        transport.driver = .nghttp2
        transport.fallsBackToHTTP1 = true
        transport.offersHTTP2 = true
        transport.share(connections: connections, maxConnections: maxConnections, lanes: lanes, lane: lane)
        transport.requestTimeoutMillis = max(1, requestTimeoutMillis)
        transport.responseBodyLimit = responseBodyLimit
        // Apple's one-stream-until-success rule is Apple's alone: a vendor's SETTINGS count from the first request.
        transport.streamsBeforeFirstSuccess = nil
        transport.rateLimit = rateLimit
        transport.app = app
        return transport
    }

    /// The longest answer that lists `tokens` tokens of up to 1,024 bytes, each escaped in JSON at worst, and
    /// room for the rest of the answer.
    public static func responseBodyLimit(listing tokens: Int) -> Int { max(1, tokens) * (2 * 1024 + 8) + 16 * 1024 }
}
