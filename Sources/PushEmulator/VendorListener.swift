import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL

/// The listener for the China vendors' clients (`EmulatorConfiguration.vendorPort`): TLS offering `h2` and
/// `http/1.1` by ALPN, because some vendors document only HTTP/1.1 and a sender must work with either.
/// HTTP/2 connections get the same stream handler as the other listeners (every path answered, a fixed stream
/// limit from the first SETTINGS); HTTP/1.1 connections (keep-alive, or a client offering no ALPN) get
/// `VendorHTTP1Handler`, which answers the vendors' paths only.
enum VendorListener {
    static func bind(group: EventLoopGroup, configuration: EmulatorConfiguration, port: Int, tls: NIOSSLContext,
                     core: EmulatorCore, stats: EmulatorStats) async throws -> Channel {
        let streamLimit = max(1, configuration.vendorMaxConcurrentStreams)
        var connectionConfiguration = NIOHTTP2Handler.ConnectionConfiguration()
        connectionConfiguration.initialSettings = [
            HTTP2Setting(parameter: .maxConcurrentStreams, value: streamLimit),
            HTTP2Setting(parameter: .maxHeaderListSize, value: 16_384),
        ]
        // The same tolerance of client resets as the other listeners (see PushEmulator.listen).
        connectionConfiguration.maximumRecentlyResetStreams = max(32, configuration.resetLimit / 10)
        connectionConfiguration.maximumConnectionGlitches = configuration.resetLimit
        var streamConfiguration = NIOHTTP2Handler.StreamConfiguration()
        streamConfiguration.streamResetFrameRateLimit.maximumCount = configuration.resetLimit
        streamConfiguration.streamErrorRateLimit.maximumCount = configuration.resetLimit
        let settings = (connection: connectionConfiguration, stream: streamConfiguration)
        return try await ServerBootstrap(group: group)
            .serverChannelOption(ChannelOptions.backlog, value: 256)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                stats.connectionOpened()
                let connection = ConnectionState(certificateAuthenticated: false, fixedStreamLimit: streamLimit)
                let delayedAnswers = DelayedAnswers(stats: stats)
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls))
                    try channel.pipeline.syncOperations.addHandler(delayedAnswers)
                }.flatMap {
                    channel.configureHTTP2SecureUpgrade(h2ChannelConfigurator: { channel in
                        channel.configureHTTP2Pipeline(mode: .server, connectionConfiguration: settings.connection,
                                                       streamConfiguration: settings.stream) { stream in
                            stream.eventLoop.makeCompletedFuture {
                                try stream.pipeline.syncOperations.addHandlers([
                                    HTTP2FramePayloadToHTTP1ServerCodec(),
                                    HTTP2StreamHandler(core: core, connection: connection, delayedAnswers: delayedAnswers),
                                ])
                            }
                        }.flatMapThrowing { _ in
                            try channel.pipeline.syncOperations.addHandler(ConnectionErrorLogger())
                        }
                    }, http1ChannelConfigurator: { channel in
                        channel.pipeline.configureHTTPServerPipeline(withErrorHandling: true).flatMapThrowing {
                            try channel.pipeline.syncOperations.addHandler(VendorHTTP1Handler(services: core.services))
                        }
                    })
                }
            }
            .bind(host: configuration.host, port: port)
            .get()
    }
}

/// One HTTP/1.1 connection on the vendor listener: requests one after another (keep-alive unless the client
/// says `Connection: close`), each answered with the vendor side's answer, as on HTTP/2.
final class VendorHTTP1Handler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    let services: ServiceRouter
    private var head: HTTPRequestHead?
    private var body: [UInt8] = []

    init(services: ServiceRouter) { self.services = services }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let requestHead):
            head = requestHead
            body.removeAll(keepingCapacity: true)
        case .body(let chunk):
            body.append(contentsOf: chunk.readableBytesView)
        case .end:
            guard let head else { return }
            self.head = nil
            var headers = head.headers.map { (name: $0.name.lowercased(), value: $0.value) }
            // HTTP/2's :authority is HTTP/1.1's Host: the JWT audience check reads "host" either way.
            if !headers.contains(where: { $0.name == "host" }) { headers.append((name: "host", value: "")) }
            let request = IncomingRequest(method: head.method.rawValue, path: head.uri, headers: headers, body: body)
            let response = services.answer(request) ?? VendorResponse(
                status: 404, headers: [("content-type", "text/plain")], body: Self.notAVendorPath)
            guard response.delayMillis > 0 else { return write(context: context, response, keepAlive: head.isKeepAlive) }
            // One request at a time on an HTTP/1.1 connection: the next is read only after this answer.
            let keepAlive = head.isKeepAlive
            context.eventLoop.scheduleTask(in: .milliseconds(Int64(response.delayMillis))) {
                guard context.channel.isActive else { return }
                self.write(context: context, response, keepAlive: keepAlive)
            }
        }
    }

    /// The answer to a path no vendor side has, naming the sides registered.
    static let notAVendorPath = "Over HTTP/1.1 this listener answers only the "
        + EmulatedServices.spelledOut(EmulatedServices.names.map(\.vendor)) + " paths; use HTTP/2 for APNs and FCM.\n"

    private func write(context: ChannelHandlerContext, _ response: VendorResponse, keepAlive: Bool) {
        var headers = HTTPHeaders(response.headers)
        headers.replaceOrAdd(name: "content-length", value: String(response.body.utf8.count))
        if !keepAlive { headers.replaceOrAdd(name: "connection", value: "close") }
        let head = HTTPResponseHead(version: .http1_1, status: HTTPResponseStatus(statusCode: response.status), headers: headers)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(string: response.body)))), promise: nil)
        let done = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if !keepAlive {
            let channel = context.channel
            done.whenComplete { _ in channel.close(promise: nil) }
        }
    }
}
