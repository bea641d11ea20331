import NIOCore
import NIOHTTP1
import NIOPosix
import PushCore

/// What the worker's small HTTP/1.1 listeners share (metrics and health on `metrics.listen`, the receipts on
/// `receipts.listen`): a server channel bound on the shared event loops, each connection an HTTP/1.1 pipeline with a
/// handler of the listener's, and an address to log. A listener that cannot be bound is a startup error naming its key.
public enum HTTPListener {
    /// The listener could not be opened: a startup error that names the configuration key and the address.
    public struct ListenError: Error, CustomStringConvertible {
        public let description: String
    }

    /// Binds `address`; `key` names it in the error (`metrics.listen`), `handler` makes each connection's handler.
    public static func bind(_ address: ListenAddress, key: String, backlog: Int,
                            handler: @escaping @Sendable () -> any ChannelHandler) async throws -> any Channel {
        do {
            return try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .serverChannelOption(ChannelOptions.backlog, value: Int32(clamping: backlog))
                .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                        try channel.pipeline.syncOperations.addHandler(handler())
                    }
                }
                .bind(host: address.host, port: address.port)
                .get()
        } catch {
            throw ListenError(description: "\(key) \(address.host):\(address.port): cannot listen (\(error))")
        }
    }

    /// Where `channel` listens (with the port the system chose when asked for port 0).
    public static func address(of channel: any Channel) -> String {
        guard let local = channel.localAddress, let ip = local.ipAddress, let port = local.port else { return "(closed)" }
        return ip.contains(":") ? "[\(ip)]:\(port)" : "\(ip):\(port)"
    }
}
