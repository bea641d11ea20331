import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import PushCore
import ServiceLifecycle

/// The receipts listener on `receipts.listen` (docs/vendors.md, "Receipts"): plain HTTP/1.1 at
/// `POST /receipts/<provider>`, apart from the metrics and health listener because this one is exposed to the services
/// through the operator's TLS proxy. Bound before the pipeline starts (a port in use is a startup error); it keeps
/// answering while the pipeline drains, and closes (with its Redis connection) when the worker's services stop or its
/// task is cancelled.
public struct ReceiptsServer: Service, CustomStringConvertible {
    let channel: any Channel
    let desk: ReceiptDesk
    let logger: Logger

    public var description: String { "ReceiptsServer(\(address))" }

    /// Where it listens (with the port the system chose when asked for port 0).
    public var address: String {
        guard let local = channel.localAddress, let ip = local.ipAddress, let port = local.port else { return "(closed)" }
        return ip.contains(":") ? "[\(ip)]:\(port)" : "\(ip):\(port)"
    }

    /// The port it listens on (tests bind port 0).
    public var port: Int { channel.localAddress?.port ?? 0 }

    public struct ListenError: Error, CustomStringConvertible {
        public let description: String
    }

    public static func bind(_ address: ListenAddress, desk: ReceiptDesk, logger: Logger) async throws -> ReceiptsServer {
        do {
            let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .serverChannelOption(ChannelOptions.backlog, value: 256)
                .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                        try channel.pipeline.syncOperations.addHandler(ReceiptHandler(desk: desk))
                    }
                }
                .bind(host: address.host, port: address.port)
                .get()
            let server = ReceiptsServer(channel: channel, desk: desk, logger: logger)
            logger.info("receipts listening", metadata: [
                "address": "\(server.address)", "paths": "\(desk.providers.map { "/receipts/\($0)" }.joined(separator: " "))",
            ])
            return server
        } catch {
            throw ListenError(description: "receipts.listen \(address.host):\(address.port): cannot listen (\(error))")
        }
    }

    public func run() async throws {
        // Until the worker shuts down (or this task is cancelled); the ServiceGroup stops it after the pipeline.
        try? await gracefulShutdown()
        try? await channel.close()
        await desk.close()
    }
}
