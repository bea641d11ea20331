import HTTP2Client
import Logging
import ProviderKit
import PushCore

/// A lane to a server that may speak h2 or only HTTP/1.1 (the vendors'): our own HTTP/2 sessions
/// (`NGHTTP2Driver`, offering h2 and http/1.1 by ALPN) until a server picks HTTP/1.1, then libcurl's HTTP/1.1
/// keep-alive pool (`CurlDriver`) for good.
///
/// Why not libcurl for both, as it offers h2 by ALPN itself: libcurl 7.88 puts requests on an h2 connection before
/// the server's SETTINGS say how many streams it allows, and reads a request's body while its stream still waits
/// inside nghttp2, so a request's deadline would start while it waits, and a slow server would see a batch of 1,000
/// timed out and sent again that it never had. Our own sessions hand a request to a connection only when it has a
/// free stream. Over HTTP/1.1 libcurl starts a request only on a connection of its own, so its deadline is true.
///
/// Confined to the transport thread, except `wake`, which wakes both drivers (each is safe from any thread).
final class HTTP1FallbackDriver: TransportDriver {
    private let h2: NGHTTP2Driver
    private let http1: CurlDriver
    /// The server picked HTTP/1.1: every request from now on goes over libcurl.
    private var usesHTTP1 = false
    private var h2Closed = false
    private let settings: TransportSettings
    private let service: any PushService
    private let logger: Logger?

    init(settings: TransportSettings, service: any PushService, logger: Logger?) throws {
        var h2Settings = settings
        h2Settings.fallsBackToHTTP1 = true
        h2 = try NGHTTP2Driver(settings: h2Settings, service: service, logger: logger)
        var http1Settings = settings
        http1Settings.driver = .libcurl
        http1Settings.offersHTTP2 = false
        http1 = CurlDriver(settings: http1Settings, service: service, logger: logger)
        self.settings = settings
        self.service = service
        self.logger = logger
        PushMetrics.shared.httpProtocol(provider: service.metrics.provider, app: settings.app, protocol: "h2", inUse: true)
    }

    private var current: any TransportDriver { usesHTTP1 ? http1 : h2 }

    var openConnections: Int { current.openConnections }
    var streamsLimit: Int? { current.streamsLimit }
    func room(limit: Int) -> Int { current.room(limit: limit) }
    func noteWaitingWork(_ waiting: Bool) { current.noteWaitingWork(waiting) }
    func start(_ request: DriverRequest) { current.start(request) }
    func cancel(id: Int) { current.cancel(id: id) }
    func onWireSince(id: Int) -> UInt64? { current.onWireSince(id: id) }
    func wait(timeoutMillis: Int32) { current.wait(timeoutMillis: timeoutMillis) }

    func wake() {
        h2.wake()
        http1.wake()
    }

    func process(into completions: inout [DriverCompletion]) {
        guard !usesHTTP1 else { return http1.process(into: &completions) }
        var found: [DriverCompletion] = []
        h2.process(into: &found)
        guard h2.serverChoseHTTP1 else {
            completions += found
            return
        }
        // The requests that failed for the server's choice, and those still with the h2 driver, were never sent:
        // they go again at once, over HTTP/1.1, without spending an attempt.
        for completion in found {
            if case .failed(let reason, false) = completion.result, reason.contains(HTTP2Client.alpnRefusal) {
                completions.append(DriverCompletion(id: completion.id, result: .unprocessed(reason: "NotSent", overload: false)))
            } else {
                completions.append(completion)
            }
        }
        completions += h2.close().map { DriverCompletion(id: $0, result: .unprocessed(reason: "NotSent", overload: false)) }
        h2Closed = true
        usesHTTP1 = true
        PushMetrics.shared.httpProtocol(provider: service.metrics.provider, app: settings.app, protocol: "h2", inUse: false)
        logger?.info("\(service.name) server speaks HTTP/1.1 only: sending over a keep-alive pool (a connection per request in flight)",
                     metadata: ["app": "\(settings.app)"])
    }

    func close() -> [Int] {
        var dropped: [Int] = []
        if !h2Closed {
            dropped += h2.close()
            h2Closed = true
        }
        return dropped + http1.close()
    }
}
