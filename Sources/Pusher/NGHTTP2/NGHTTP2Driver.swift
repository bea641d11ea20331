import Dispatch
import Foundation
import HTTP2Client
import Logging
import ProviderKit
import PushCore

/// A provider's `transport: nghttp2` (and the other provider modules' HTTP/2 lanes): our own HTTP/2 sessions
/// (`HTTP2Client`: libnghttp2 and OpenSSL). The client reads every SETTINGS frame, so the room it gives is exactly
/// the free streams of its open connections and nothing waits inside nghttp2: a request's deadline starts when it is
/// sent.
/// Confined to the transport thread, except `wake`.
final class NGHTTP2Driver: TransportDriver {
    private let client: HTTP2Client
    private let settings: TransportSettings
    private let service: any PushService
    private let logger: Logger?
    private let metrics: ServiceMetrics
    // Per-request state, touched by the transport thread one access at a time: no runtime exclusivity check
    // (see Scheduler's thread-confined state).
    /// When each request in flight was handed to the client (its HEADERS leave in the same iteration).
    @exclusivity(unchecked) private var startedAt = StartTimes()
    @exclusivity(unchecked) private var events: [HTTP2Event] = []
    @exclusivity(unchecked) private var headerCache = HeaderCache<HTTP2HeaderBlock>()
    /// Completions decided without the server (no connection could be made): reported by `process`.
    @exclusivity(unchecked) private var local: [DriverCompletion] = []
    /// Why a connection attempt just failed while no connection was open. Each failed attempt fails, once,
    /// the requests waiting for a connection (each spends an attempt and backs off), as a connection per
    /// request would: a server that stays unreachable dead-letters after the retry budget, while requests
    /// that arrive between two attempts wait for the next one rather than fail at once.
    private var connectFailure: String?
    /// Connections that got as far as the server's SETTINGS: the close of one that never did is a failed connect.
    private var opened = Set<Int>()
    /// A connection failed because the server chose HTTP/1.1 by ALPN (`TransportSettings.fallsBackToHTTP1`).
    private(set) var serverChoseHTTP1 = false

    init(settings: TransportSettings, service: any PushService, logger: Logger?) throws {
        guard let url = URLComponents(string: settings.baseURL), let host = url.host else {
            throw TransportSetupError(description: "\(service.name) endpoint \(settings.baseURL) has no host")
        }
        var endpoint = HTTP2Endpoint(host: host, port: url.port ?? 443)
        endpoint.caFile = settings.caFile
        endpoint.clientCertificateFile = settings.certificateFile
        endpoint.clientCertificatePassword = settings.certificatePassword.value
        endpoint.initialConnections = max(1, settings.initialConnections)
        endpoint.maxConnections = max(endpoint.initialConnections, settings.connections)
        endpoint.pingIntervalMillis = settings.pingIntervalMillis
        endpoint.pingTimeoutMillis = settings.requestTimeoutMillis
        endpoint.connectTimeoutMillis = settings.requestTimeoutMillis
        endpoint.responseBodyLimit = max(0, settings.responseBodyLimit)
        endpoint.offersHTTP1 = settings.fallsBackToHTTP1
        // A connection is usable only once the server's SETTINGS came, so without a first-success rule its
        // stream limit is the server's from the first request.
        endpoint.firstStreamLimit = settings.streamsBeforeFirstSuccess ?? endpoint.maxStreamsPerConnection
        self.settings = settings
        self.service = service
        self.metrics = service.metrics
        self.logger = logger
        client = try HTTP2Client(endpoint: endpoint)
    }

    var openConnections: Int { client.openConnections }
    var streamsLimit: Int? { client.streamsLimit }

    func room(limit: Int) -> Int {
        if connectFailure != nil && client.openConnections == 0 { return max(0, limit) }
        return max(0, min(limit, client.availableStreams))
    }

    func noteWaitingWork(_ waiting: Bool) { client.waitingWork = waiting }

    func start(_ request: DriverRequest) {
        if let connectFailure, client.availableStreams == 0 {
            local.append(DriverCompletion(id: request.id, result: .failed(reason: connectFailure, sent: false)))
            return
        }
        let job = request.job
        let service = self.service
        let headers = headerCache.block(for: job, generation: request.generation, epoch: request.headerEpoch, bearer: request.bearer) {
            HTTP2HeaderBlock(service.headerFields(for: $0, bearer: $1).map { ($0.name, $0.value, $0.name == "authorization") })
        }
        // The parts as arguments: an HTTP2Request would retain each of them once more, and release them after.
        // A `.payload` body is the job's own array, shared by its tokens' streams (an HTTP2Body per job was an
        // object to make and free for every one-token message).
        let path = service.path(for: job, tokens: request.tokens)
        let payload: [UInt8]
        switch service.body(for: job, tokens: request.tokens) {
        case .payload: payload = job.job.payload
        case .bytes(let bytes): payload = bytes
        }
        let sent = client.start(id: UInt64(request.id), path: path.fixed, pathSuffix: path.suffix,
                                headers: headers, payload: payload)
        if sent {
            startedAt[request.id] = request.now
        } else {
            local.append(DriverCompletion(id: request.id, result: .unprocessed(reason: "NoFreeStream", overload: false)))
        }
    }

    func cancel(id: Int) {
        _ = startedAt.remove(id)
        client.cancel(id: UInt64(id))
    }

    func onWireSince(id: Int) -> UInt64? { startedAt[id] }

    func process(into completions: inout [DriverCompletion]) {
        if !local.isEmpty {
            completions += local
            local.removeAll(keepingCapacity: true)
        }
        // The scheduler has just started (and so failed) what waited for the failed attempt.
        connectFailure = nil
        client.poll(timeoutMillis: 0, into: &events)
        guard !events.isEmpty else { return }
        let now = DispatchTime.now().uptimeNanoseconds
        for event in events {
            switch event {
            case .response(let id, let status, let body, _, let retryAfter):
                guard let started = startedAt.remove(Int(id)) else { continue }
                let wire = now > started ? Int64((now - started) / 1000) : 0
                completions.append(DriverCompletion(id: Int(id), result: .answered(status: status, body: body, wireMicros: wire,
                                                                                  retryAfter: retryAfter)))
            case .refused(let id, let reason):
                guard startedAt.remove(Int(id)) != nil else { continue }
                completions.append(DriverCompletion(id: Int(id), result: .unprocessed(reason: Self.unprocessedLabel(reason),
                                                                                      overload: Self.signalsOverload(reason))))
            case .lost(let id, let reason):
                guard startedAt.remove(Int(id)) != nil else { continue }
                completions.append(DriverCompletion(id: Int(id), result: .failed(reason: "TransportError: \(reason)", sent: true)))
            case .connectionOpened(let connection):
                opened.insert(connection)
                metrics.connectionOpened(app: settings.app)
                logger?.debug("\(service.name) connection open", metadata: ["app": "\(settings.app)", "connection": "\(connection)",
                                                                 "open": "\(client.openConnections)"])
            case .connectionClosed(let connection, let reason):
                if opened.remove(connection) == nil && client.openConnections == 0 {
                    connectFailure = Self.connectFailureReason(reason)
                }
                if HTTP2Client.selectedHTTP1(reason) { serverChoseHTTP1 = true }
                logger?.debug("\(service.name) connection closed", metadata: ["app": "\(settings.app)", "connection": "\(connection)",
                                                                   "reason": "\(reason)", "open": "\(client.openConnections)"])
            case .goaway(let connection, let lastStreamID, let errorCode, let debugData):
                logger?.debug("\(service.name) GOAWAY", metadata: ["app": "\(settings.app)", "connection": "\(connection)",
                                                        "last_stream_id": "\(lastStreamID)", "error_code": "\(errorCode)",
                                                        "reason": "\(Printable.clipped(debugData, to: 200))"])
            }
        }
        events.removeAll(keepingCapacity: true)
    }

    func wait(timeoutMillis: Int32) {
        client.poll(timeoutMillis: Int(timeoutMillis), into: &events)
    }

    func wake() { client.wake() }

    func close() -> [Int] {
        startedAt = StartTimes()
        return client.close().map { Int($0) }
    }

    /// A small known set of retry labels for requests the server never processed.
    static func unprocessedLabel(_ reason: String) -> String {
        if reason.contains("GOAWAY") { return "GoawayUnprocessed" }
        if reason.contains("REFUSED") || reason.contains("refused") { return "RefusedStream" }
        return "NotSent"
    }

    /// Whether a request the server did not process says it is overloaded: it refused the stream, or went away
    /// naming an error. A graceful GOAWAY (NO_ERROR) is how servers rotate connections (some do, after a while):
    /// taken as overload, every rotation cut the limit, which then regrew slowly (GOAWAY every 300 answers at
    /// 10 ms: 11 requests in flight and 1,322/s, against 3,740/s before the limiter counted it).
    static func signalsOverload(_ reason: String) -> Bool {
        reason.contains("REFUSED") || reason.hasPrefix("above GOAWAY(")
    }

    /// A failed connection attempt as a dead letter's reason: `Timeout` or `ConnectionError: …`.
    static func connectFailureReason(_ reason: String) -> String {
        if reason.lowercased().contains("timed out") || reason.lowercased().contains("timeout") { return "Timeout" }
        return reason.hasPrefix("ConnectionError") ? reason : "ConnectionError: \(reason)"
    }
}

/// A transport that cannot be set up (a bad endpoint, CA file or certificate): a startup error.
struct TransportSetupError: Error, CustomStringConvertible {
    let description: String
}

/// Start times by request id. The scheduler's ids are the slots of its in-flight table (small, dense,
/// reused), so an array indexed by id serves where a dictionary would hash twice per request.
struct StartTimes {
    private var times: [UInt64] = []
    private static let none = UInt64.max

    subscript(id: Int) -> UInt64? {
        get { id >= 0 && id < times.count && times[id] != Self.none ? times[id] : nil }
        set {
            guard id >= 0 else { return }
            if id >= times.count {
                guard newValue != nil else { return }
                times.append(contentsOf: repeatElement(Self.none, count: id + 1 - times.count))
            }
            times[id] = newValue ?? Self.none
        }
    }

    /// The start time of `id`, now forgotten.
    mutating func remove(_ id: Int) -> UInt64? {
        let time = self[id]
        if time != nil { self[id] = nil }
        return time
    }
}
