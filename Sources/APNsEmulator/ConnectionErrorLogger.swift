import Foundation
import NIOCore
import NIOHTTP2
import NIOSSL

/// Reports why a connection failed (protocol errors, TLS failures) on stderr: an emulator that closes
/// connections silently would hide exactly what its users need to see.
final class ConnectionErrorLogger: ChannelInboundHandler, Sendable {
    typealias InboundIn = Any

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        // Closing a connection we already sent GOAWAY on makes NIO try a second, wider GOAWAY: our own doing.
        if error is NIOHTTP2Errors.RaisedGoawayLastStreamID {
            context.close(promise: nil)
            return
        }
        // A frame for a stream that is already closed (libcurl 7.88 resets or updates the window of streams
        // whose answer it has) is a stream-level matter: RFC 9113 section 5.1 has the receiver ignore it.
        // Closing the connection here would cut every other stream on it short, which APNs does not do.
        if error is NIOHTTP2Errors.NoSuchStream || error is NIOHTTP2Errors.StreamClosed {
            return
        }
        // A client that closes TCP without TLS close_notify (libcurl at exit) is normal, not news.
        if case NIOSSLError.uncleanShutdown = error {
            context.close(promise: nil)
            return
        }
        let peer = context.channel.remoteAddress.map { "\($0)" } ?? "?"
        FileHandle.standardError.write(Data("apns-emulator: connection \(peer): \(error)\n".utf8))
        context.close(promise: nil)
    }
}
