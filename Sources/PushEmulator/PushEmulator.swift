import Foundation
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL
import NIOConcurrencyHelpers

/// An HTTP/2 + TLS server that answers `POST /3/device/<token>` as APNs does (see `RequestJudge`), and FCM HTTP v1's
/// `POST /token` and `POST /v1/projects/<project>/messages:send` as Google does (`FCMTokenEndpoint`, `FCMSendJudge`),
/// with the connection behaviour and faults a test or benchmark asks for. FCM's 100 streams per connection are
/// served on a listener of their own (`EmulatorConfiguration.fcmPort`).
public final class PushEmulator: Sendable {
    public let configuration: EmulatorConfiguration
    public let stats = EmulatorStats()
    /// The access tokens the FCM token endpoint issued, and its test hooks (revoke, down, lifetime).
    public let fcmTokens: AccessTokenRegistry
    /// `messages:send`: its counters and its faults, changeable while running.
    public let fcm: FCMSide
    /// The vendor sides (`EmulatedServices.swift`): each side's folder adds its accessor (`PushEmulator.<vendor>`:
    /// counters, clock and faults, changeable while running).
    let services: ServiceRouter
    /// The certificate clients must trust (PEM): the generated one, or the one configured.
    public let certificatePEM: String
    private let core: EmulatorCore
    private let tls: NIOSSLContext
    /// The vendor listener's TLS: the same certificate, ALPN `h2` and `http/1.1`.
    private let vendorTLS: NIOSSLContext
    private let vendorServer = NIOLockedValueBox<(channel: Channel?, port: Int)>((nil, 0))
    private let group: MultiThreadedEventLoopGroup
    private let server = NIOLockedValueBox<(channel: Channel?, port: Int)>((nil, 0))
    private let fcmServer = NIOLockedValueBox<(channel: Channel?, port: Int)>((nil, 0))
    /// Cancels the scheduled FCM faults.
    private let scheduled = NIOLockedValueBox<[@Sendable () -> Void]>([])

    public init(configuration: EmulatorConfiguration) throws {
        self.configuration = configuration
        let certificatePEM: String
        let keyPEM: String
        if let certificateFile = configuration.certificateFile, let keyFile = configuration.privateKeyFile {
            certificatePEM = try String(contentsOfFile: certificateFile, encoding: .utf8)
            keyPEM = try String(contentsOfFile: keyFile, encoding: .utf8)
        } else {
            let generated = try SelfSignedCertificate.generate(extraNames: configuration.certificateNames)
            certificatePEM = generated.certificatePEM
            keyPEM = generated.privateKeyPEM
        }
        self.certificatePEM = certificatePEM
        if let caOutput = configuration.caOutputFile {
            try certificatePEM.write(toFile: caOutput, atomically: true, encoding: .utf8)
        }
        var tlsConfiguration = TLSConfiguration.makeServerConfiguration(
            certificateChain: try NIOSSLCertificate.fromPEMBytes(Array(certificatePEM.utf8)).map { .certificate($0) },
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(keyPEM.utf8), format: .pem)))
        tlsConfiguration.applicationProtocols = ["h2"]
        tlsConfiguration.minimumTLSVersion = .tlsv12
        if let clientCA = configuration.clientCAFile {
            tlsConfiguration.certificateVerification = .noHostnameVerification
            tlsConfiguration.trustRoots = .file(clientCA)
        }
        tls = try NIOSSLContext(configuration: tlsConfiguration)
        tlsConfiguration.applicationProtocols = configuration.vendorOffersHTTP2 ? ["h2", "http/1.1"] : ["http/1.1"]
        vendorTLS = try NIOSSLContext(configuration: tlsConfiguration)
        let services = try ServiceRouter(configuration: configuration)
        self.services = services
        let fcmTokens = AccessTokenRegistry(lifetimeSeconds: configuration.fcmAccessTokenLifetimeSeconds)
        self.fcmTokens = fcmTokens
        let faults = FCMFaultInjector(configuration.fcmFaults)
        fcm = FCMSide(stats: stats.fcm, tokens: fcmTokens, injector: faults)
        let fcmCore = FCMCore(judge: FCMSendJudge(configuration: configuration, registry: fcmTokens, faults: faults),
                              stats: stats.fcm, faults: faults, recorder: try DeliveryRecorder(path: configuration.fcmRecordFile),
                              onAnswer: configuration.onFCMAnswer)
        core = EmulatorCore(configuration: configuration, judge: try RequestJudge(configuration: configuration),
                            stats: stats, recorder: try DeliveryRecorder(path: configuration.recordFile),
                            fcmTokenEndpoint: try FCMTokenEndpoint(configuration: configuration, registry: fcmTokens), fcm: fcmCore,
                            services: services)
        group = MultiThreadedEventLoopGroup(numberOfThreads: max(1, configuration.threads))
    }

    /// The bound port (useful with port 0).
    public var port: Int { server.withLockedValue { $0.port } }
    public var endpoint: String { "https://\(configuration.host):\(port)" }
    /// The FCM listener's bound port (0 when `fcmPort` is not set).
    public var fcmPort: Int { fcmServer.withLockedValue { $0.port } }
    /// `https://host:fcmPort`: what a sender's `fcm.endpoint` names.
    public var fcmEndpoint: String { "https://\(configuration.host):\(fcmPort)" }

    /// The vendor listener's bound port (0 when `vendorPort` is not set), and `https://host:vendorPort`.
    public var vendorPort: Int { vendorServer.withLockedValue { $0.port } }
    public var vendorEndpoint: String { "https://\(configuration.host):\(vendorPort)" }

    /// Binds the listeners (the main one, and the FCM one when configured) and starts the scheduled FCM
    /// faults; returns the main port.
    @discardableResult
    public func start() async throws -> Int {
        let channel = try await listen(port: configuration.port, streamLimit: nil)
        let port = channel.localAddress?.port ?? configuration.port
        server.withLockedValue { $0 = (channel, port) }
        if let fcmPort = configuration.fcmPort {
            let fcmChannel = try await listen(port: fcmPort, streamLimit: max(1, configuration.fcmMaxConcurrentStreams))
            fcmServer.withLockedValue { $0 = (fcmChannel, fcmChannel.localAddress?.port ?? fcmPort) }
        }
        if let vendorPort = configuration.vendorPort {
            let vendorChannel = try await VendorListener.bind(group: group, configuration: configuration, port: vendorPort,
                                                              tls: vendorTLS, core: core, stats: stats)
            vendorServer.withLockedValue { $0 = (vendorChannel, vendorChannel.localAddress?.port ?? vendorPort) }
        }
        scheduleTokenFaults()
        return port
    }

    /// `--fcm-token-down-for` and `--fcm-revoke-every`: on the event loop, cancelled by `stop()`.
    private func scheduleTokenFaults() {
        let tokens = fcmTokens
        let loop = group.next()
        var cancels: [@Sendable () -> Void] = []
        if let seconds = configuration.fcmTokenEndpointDownForSeconds, seconds > 0 {
            tokens.setDown(true)
            let up = loop.scheduleTask(in: .seconds(Int64(seconds))) { tokens.setDown(false) }
            cancels.append { up.cancel() }
        }
        if let seconds = configuration.fcmRevokeTokensEverySeconds, seconds > 0 {
            let task = loop.scheduleRepeatedTask(initialDelay: .seconds(Int64(seconds)), delay: .seconds(Int64(seconds))) { _ in
                tokens.revokeAll()
            }
            cancels.append { task.cancel() }
        }
        scheduled.withLockedValue { $0 = cancels }
    }

    /// One listener. `streamLimit` nil: APNs's stream rules (`initialMaxConcurrentStreams`, raised after the first
    /// authenticated request); a number: that many from the first SETTINGS on, never changed (FCM's).
    private func listen(port: Int, streamLimit: Int?) async throws -> Channel {
        let core = self.core
        let tls = self.tls
        let stats = self.stats
        let certificateAuth = configuration.clientCAFile != nil
        var connectionConfiguration = NIOHTTP2Handler.ConnectionConfiguration()
        connectionConfiguration.initialSettings = [
            HTTP2Setting(parameter: .maxConcurrentStreams, value: streamLimit ?? configuration.initialMaxConcurrentStreams),
            HTTP2Setting(parameter: .maxHeaderListSize, value: 16_384),
        ]
        // libcurl 7.88 resets (RST_STREAM STREAM_CLOSED) many streams it has already received the answer for;
        // swift-nio-http2's rapid-reset guard would close the connection after 200 in 30 s. Tolerated by default.
        connectionConfiguration.maximumRecentlyResetStreams = max(32, configuration.resetLimit / 10)
        connectionConfiguration.maximumConnectionGlitches = configuration.resetLimit
        // Each collapse and restore of the stream limit (`collapseStreamsOnError`) is a SETTINGS frame the client
        // acknowledges; swift-nio-http2 closes a connection after 200 control frames in 30 s, which would turn the
        // server's own SETTINGS into dropped connections. A server that sends them must accept the ACKs.
        connectionConfiguration.controlFrameRateLimit.maximumCount = max(200, configuration.resetLimit)
        var streamConfiguration = NIOHTTP2Handler.StreamConfiguration()
        streamConfiguration.streamResetFrameRateLimit.maximumCount = configuration.resetLimit
        streamConfiguration.streamErrorRateLimit.maximumCount = configuration.resetLimit
        let settings = (connection: connectionConfiguration, stream: streamConfiguration)
        return try await ServerBootstrap(group: group)
            .serverChannelOption(ChannelOptions.backlog, value: 1024)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                stats.connectionOpened()
                let connection = ConnectionState(certificateAuthenticated: certificateAuth, fixedStreamLimit: streamLimit)
                let delayedAnswers = DelayedAnswers(stats: stats)
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls))
                    // Between TLS and HTTP/2: it holds the connection's flushes while a batch of answers is written.
                    try channel.pipeline.syncOperations.addHandler(delayedAnswers)
                }.flatMap {
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
                }
            }
            .bind(host: configuration.host, port: port)
            .get()
    }

    /// Stops accepting FCM connections on the FCM listener (`fcmPort`): a client is refused there, as by an FCM
    /// endpoint that cannot be reached, until `reopenFCMListener()`. The main listener (the token endpoint) stays.
    public func closeFCMListener() async {
        let channel = fcmServer.withLockedValue { state -> Channel? in
            defer { state.channel = nil }
            return state.channel
        }
        try? await channel?.close()
    }

    /// Listens again on the FCM port `closeFCMListener()` closed, with the same stream rule.
    public func reopenFCMListener() async throws {
        let port = fcmPort
        guard configuration.fcmPort != nil, port > 0, fcmServer.withLockedValue({ $0.channel == nil }) else { return }
        let channel = try await listen(port: port, streamLimit: max(1, configuration.fcmMaxConcurrentStreams))
        fcmServer.withLockedValue { $0 = (channel, port) }
    }

    public func stop() async throws {
        let cancels = scheduled.withLockedValue { cancels in
            defer { cancels = [] }
            return cancels
        }
        cancels.forEach { $0() }
        let fcmChannel = fcmServer.withLockedValue { $0.channel }
        try? await fcmChannel?.close()
        let vendorChannel = vendorServer.withLockedValue { $0.channel }
        try? await vendorChannel?.close()
        let channel = server.withLockedValue { $0.channel }
        try await channel?.close()
        try await group.shutdownGracefully()
    }

    /// Runs until the server channel closes.
    public func waitUntilClosed() async throws {
        let channel = server.withLockedValue { $0.channel }
        try await channel?.closeFuture.get()
    }
}
