import Logging
import NIOCore
import Observability
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
    public var address: String { HTTPListener.address(of: channel) }

    /// The port it listens on (tests bind port 0).
    public var port: Int { channel.localAddress?.port ?? 0 }

    public typealias ListenError = HTTPListener.ListenError

    public static func bind(_ address: ListenAddress, desk: ReceiptDesk, logger: Logger) async throws -> ReceiptsServer {
        let channel = try await HTTPListener.bind(address, key: "receipts.listen", backlog: 256) { ReceiptHandler(desk: desk) }
        let server = ReceiptsServer(channel: channel, desk: desk, logger: logger)
        logger.info("receipts listening", metadata: [
            "address": "\(server.address)", "paths": "\(desk.providers.map { "/receipts/\($0)" }.joined(separator: " "))",
        ])
        return server
    }

    public func run() async throws {
        // Until the worker shuts down (or this task is cancelled); the ServiceGroup stops it after the pipeline.
        try? await gracefulShutdown()
        try? await channel.close()
        await desk.close()
    }
}
