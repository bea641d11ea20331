import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import PushCore
import ServiceLifecycle

/// The small HTTP/1.1 listener on `metrics.listen`: `/metrics`, `/healthz`, `/readyz`. It is bound before the
/// pipeline starts (a port in use is a startup error, before anything is claimed), keeps answering while the
/// pipeline drains (readiness then says so), and closes when the worker's last service has stopped.
public struct ObservabilityServer: Service, CustomStringConvertible {
    let channel: any Channel
    let logger: Logger

    public var description: String { "ObservabilityServer(\(address))" }

    /// Where it listens (with the port the system chose when asked for port 0).
    public var address: String { HTTPListener.address(of: channel) }

    /// The listener could not be opened: a startup error that names the address.
    public typealias ListenError = HTTPListener.ListenError

    /// Binds the listener; throws `ListenError` naming the address when it cannot.
    public static func bind(_ address: ListenAddress, routes: HealthRoutes, logger: Logger) async throws -> ObservabilityServer {
        let channel = try await HTTPListener.bind(address, key: "metrics.listen", backlog: 64) { HealthHandler(routes: routes) }
        let server = ObservabilityServer(channel: channel, logger: logger)
        logger.info("metrics and health listening", metadata: ["address": "\(server.address)", "paths": "/metrics /healthz /readyz"])
        return server
    }

    public func run() async throws {
        // Runs until the worker shuts down; the ServiceGroup stops this service after the pipeline.
        try? await gracefulShutdown()
        try? await channel.close()
    }
}

/// One request at a time per connection (HTTP/1.1 keep-alive): answers when the request has ended.
final class HealthHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let routes: HealthRoutes
    private var head: HTTPRequestHead?

    init(routes: HealthRoutes) { self.routes = routes }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let request):
            head = request
        case .body:
            break  // no route takes a body
        case .end:
            guard let request = head else { return }
            head = nil
            respond(to: request, context: context)
        }
    }

    private func respond(to request: HTTPRequestHead, context: ChannelHandlerContext) {
        let response = routes.respond(method: request.method.rawValue, path: request.uri)
        var headers = HTTPHeaders()
        headers.add(name: "content-type", value: response.contentType)
        headers.add(name: "content-length", value: String(response.body.count))
        headers.add(name: "cache-control", value: "no-store")
        let keepAlive = request.isKeepAlive
        if !keepAlive { headers.add(name: "connection", value: "close") }
        let status = HTTPResponseStatus(statusCode: response.status)
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: request.version, status: status, headers: headers))), promise: nil)
        if request.method != .HEAD {
            context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: response.body)))), promise: nil)
        }
        let done = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: done)
        if !keepAlive {
            let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
            done.futureResult.whenComplete { _ in loopBound.value.close(promise: nil) }
        }
    }
}
