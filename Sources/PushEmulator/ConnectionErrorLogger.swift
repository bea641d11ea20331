import Foundation
import NIOCore
import NIOHTTP2
import NIOSSL

/// Reports why a connection failed (protocol errors, TLS failures) on stderr: an emulator that closes
/// connections silently would hide exactly what its users need to see.
final class ConnectionErrorLogger: ChannelInboundHandler {
    typealias InboundIn = Any
    /// Stream errors reported on this connection (one handler per connection, on its event loop).
    private var streamErrors = 0

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        // NIO refused to send a second GOAWAY wider than the one we sent: the first stands, and the connection
        // carries on until its covered streams are answered (when we close it ourselves, NIO tries one too).
        if error is NIOHTTP2Errors.RaisedGoawayLastStreamID {
            return
        }
        // A frame for a stream that is already closed (libcurl 7.88 resets or updates the window of streams
        // whose answer it has; a client's DATA for a stream NIO refused after our GOAWAY) is a stream-level
        // matter: RFC 9113 sections 5.1 and 6.8 have the receiver ignore it. Closing the connection here would cut
        // every other stream on it short, which APNs does not do.
        if error is NIOHTTP2Errors.NoSuchStream || error is NIOHTTP2Errors.StreamClosed {
            return
        }
        // A stream error: NIO has reset that one stream already (a stream opened above our GOAWAY's last stream
        // id is refused this way); the connection and its other streams go on. The first is reported, so that a
        // client sending something wrong is seen, without a line for each of its streams.
        if let streamError = error as? NIOHTTP2Errors.StreamError {
            streamErrors += 1
            if streamErrors == 1 {
                let peer = context.channel.remoteAddress.map { "\($0)" } ?? "?"
                FileHandle.standardError.write(Data(("push-emulator: connection \(peer): stream \(streamError.streamID) reset: "
                    + "\(streamError.baseError) (the connection goes on; later stream errors on it are not shown)\n").utf8))
            }
            return
        }
        // A client that closes TCP without TLS close_notify (libcurl at exit) is normal, not news.
        if case NIOSSLError.uncleanShutdown = error {
            context.close(promise: nil)
            return
        }
        let peer = context.channel.remoteAddress.map { "\($0)" } ?? "?"
        FileHandle.standardError.write(Data("push-emulator: connection \(peer): \(error)\n".utf8))
        context.close(promise: nil)
    }
}
