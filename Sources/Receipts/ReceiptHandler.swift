import NIOCore
import NIOHTTP1

/// One connection's requests, one at a time (HTTP/1.1 keep-alive): the body is collected up to
/// `ReceiptDesk.maxBodyBytes`, then the desk answers off the event loop (it waits for Redis) and the answer is
/// written back on it. A body over the bound is not kept: the rest is read and dropped, 413 answered at its end and
/// the connection closed; past `abandonBytes` the connection is closed at once.
final class ReceiptHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    /// Bytes dropped after which a sender is not waited for any more.
    static let abandonBytes = 4 * ReceiptDesk.maxBodyBytes

    private let desk: ReceiptDesk
    private var head: HTTPRequestHead?
    private var body: [UInt8] = []
    /// Bytes seen of a body over the bound (nil while it is within it).
    private var overflow: Int?

    init(desk: ReceiptDesk) { self.desk = desk }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let request):
            head = request
            body = []
            overflow = nil
            let declared = request.headers.first(name: "content-length").flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
            if let declared, declared > ReceiptDesk.maxBodyBytes {
                overflow = 0
                if declared > Self.abandonBytes { abandon(request, context: context) }
            }
        case .body(let buffer):
            guard let request = head else { return }
            if let seen = overflow {
                overflow = seen + buffer.readableBytes
                if seen + buffer.readableBytes > Self.abandonBytes { abandon(request, context: context) }
            } else if body.count + buffer.readableBytes > ReceiptDesk.maxBodyBytes {
                overflow = body.count + buffer.readableBytes
                body = []
            } else {
                body += buffer.readableBytesView
            }
        case .end:
            guard let request = head else { return }
            head = nil
            if overflow != nil {
                overflow = nil
                respond(desk.tooLarge(path: request.uri), to: request, close: true, context: context)
                return
            }
            let bytes = body
            body = []
            let desk = self.desk
            let headers = request.headers.map { (name: $0.name, value: $0.value) }
            let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            context.eventLoop.makeFutureWithTask {
                await desk.answer(method: request.method.rawValue, path: request.uri, headers: headers, body: bytes)
            }.whenSuccess { answer in
                let (handler, context) = bound.value
                handler.respond(answer, to: request, close: !request.isKeepAlive, context: context)
            }
        }
    }

    /// A sender that goes on past `abandonBytes`: answered 413 now and cut off.
    private func abandon(_ request: HTTPRequestHead, context: ChannelHandlerContext) {
        head = nil
        overflow = nil
        respond(desk.tooLarge(path: request.uri), to: request, close: true, context: context)
    }

    private func respond(_ answer: ReceiptAnswer, to request: HTTPRequestHead, close: Bool, context: ChannelHandlerContext) {
        guard context.channel.isActive else { return }
        var headers = HTTPHeaders()
        headers.add(name: "content-type", value: "application/json")
        headers.add(name: "content-length", value: String(answer.body.utf8.count))
        headers.add(name: "cache-control", value: "no-store")
        if close { headers.add(name: "connection", value: "close") }
        let status = HTTPResponseStatus(statusCode: answer.status)
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: request.version, status: status, headers: headers))), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(string: answer.body)))), promise: nil)
        let done = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: done)
        if close {
            let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
            done.futureResult.whenComplete { _ in bound.value.close(promise: nil) }
        }
    }
}
