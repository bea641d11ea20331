import PushCore

/// What the listener answers, by path; no I/O, so it can be tested on its own.
public struct HealthRoutes: Sendable {
    public struct Response: Sendable, Equatable {
        public var status: Int
        public var contentType: String
        public var body: [UInt8]
    }

    let readiness: Readiness
    let metrics: @Sendable () -> [UInt8]

    public init(readiness: Readiness, metrics: @escaping @Sendable () -> [UInt8]) {
        self.readiness = readiness
        self.metrics = metrics
    }

    static let text = "text/plain; charset=utf-8"
    /// Prometheus' text exposition format.
    static let exposition = "text/plain; version=0.0.4; charset=utf-8"

    public func respond(method: String, path: String) -> Response {
        let route = path.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? path
        guard method == "GET" || method == "HEAD" else {
            return Response(status: 405, contentType: Self.text, body: Array("only GET and HEAD\n".utf8))
        }
        switch route {
        case "/metrics":
            return Response(status: 200, contentType: Self.exposition, body: metrics())
        case "/healthz":
            // Liveness: answering at all is the proof; a worker that is draining or cut off from Redis is
            // still alive and must not be restarted for it.
            return Response(status: 200, contentType: Self.text, body: Array("ok\n".utf8))
        case "/readyz":
            if let reason = readiness.reason {
                return Response(status: 503, contentType: Self.text, body: Array("not ready: \(reason)\n".utf8))
            }
            // An app held for its credential is that app's alert (PushAppPaused), not the pod's: still ready.
            if let held = readiness.heldApps {
                return Response(status: 200, contentType: Self.text, body: Array("ready; apps held: \(held)\n".utf8))
            }
            return Response(status: 200, contentType: Self.text, body: Array("ready\n".utf8))
        default:
            return Response(status: 404, contentType: Self.text, body: Array("not found; try /metrics, /healthz or /readyz\n".utf8))
        }
    }
}
