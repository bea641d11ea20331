import Foundation
import NIOCore
import NIOHTTP1
import NIOHTTP2

/// One HTTP/2 stream on any listener, routed by its path: a vendor side's (`ServiceRouter`), FCM's token endpoint or
/// `messages:send` (FCM/), or APNs's (APNs/, which also answers the paths nobody has). Answers only after the whole
/// request (END_STREAM) arrived, as the services do; keeps the connection's stream limit and slots, and applies the
/// connection-level faults (GOAWAY, drops).
final class HTTP2StreamHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    let core: EmulatorCore
    let connection: ConnectionState
    /// Writes the answers that wait for the latency, batched per connection.
    let delayedAnswers: DelayedAnswers
    private var head: HTTPRequestHead?
    private var body: ByteBuffer?
    /// Refused for exceeding the stream limit: the rest of the request is ignored.
    private var refused = false
    /// Counted in `connection.activeStreams` and not yet answered: given back by the answer, or by the stream's
    /// end without one (reset by the client, or by NIO for a stream error).
    private var holdsSlot = false
    /// A `messages:send` stream, also counted in `connection.activeFCMStreams`.
    private var isFCMSend = false

    init(core: EmulatorCore, connection: ConnectionState, delayedAnswers: DelayedAnswers) {
        self.core = core
        self.connection = connection
        self.delayedAnswers = delayedAnswers
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if refused { return }
        switch unwrapInboundIn(data) {
        case .head(let requestHead):
            let configuration = core.configuration
            let limit = connection.fixedStreamLimit ?? (connection.streamLimitCollapsed ? 1
                : connection.streamLimitRaised ? configuration.maxConcurrentStreams : configuration.initialMaxConcurrentStreams)
            if connection.activeStreams >= limit {
                // Streams beyond the advertised limit (the client may open some before it has seen our
                // SETTINGS) are refused, as APNs does: the client must retry them.
                refused = true
                if connection.fixedStreamLimit != nil { core.fcm.stats.streamRefused() } else { core.stats.streamRefused() }
                // Written below the HTTP/1 codec, which only knows response parts.
                if let codec = try? context.pipeline.syncOperations.context(handlerType: HTTP2FramePayloadToHTTP1ServerCodec.self) {
                    codec.writeAndFlush(NIOAny(HTTP2Frame.FramePayload.rstStream(.refusedStream)), promise: nil)
                } else {
                    context.close(promise: nil)
                }
                return
            }
            head = requestHead
            body = context.channel.allocator.buffer(capacity: 512)
            connection.activeStreams += 1
            holdsSlot = true
            core.stats.noteActiveStreams(connection.activeStreams)
            if FCMSendJudge.handles(path: requestHead.uri) && !core.services.handles(path: requestHead.uri) {
                isFCMSend = true
                connection.activeFCMStreams += 1
                core.fcm.stats.noteActiveStreams(connection.activeFCMStreams)
            }
            if let id = try? context.channel.syncOptions?.getOption(HTTP2StreamChannelOptions.streamID) {
                connection.highestStreamID = max(connection.highestStreamID, Int(Int32(id)))
            }
        case .body(var chunk):
            body?.writeBuffer(&chunk)
        case .end:
            respond(context: context)
        }
    }

    private func respond(context: ChannelHandlerContext) {
        guard let head else { return }
        let configuration = core.configuration
        connection.requests += 1
        if let drop = configuration.dropAfterRequests, connection.requests >= drop {
            // An abrupt drop: no answer, no GOAWAY. The client must retry elsewhere.
            context.channel.parent?.close(promise: nil)
            return
        }
        if head.method == .GET && head.uri == "/_emulator/stats" {
            write(context: context, status: 200, headers: [("content-type", "application/json")], body: core.stats.json)
            return
        }
        let bytes = body.map { Array($0.readableBytesView) } ?? []
        let request = IncomingRequest(method: head.method.rawValue, path: head.uri,
                                      headers: head.headers.map { ($0.name.lowercased(), $0.value) }, body: bytes)
        if let answer = core.services.answer(request) {
            // A vendor side's paths: its own checks, counters and faults (a vendor's path may be under /v1/ too).
            if answer.delayMillis > 0 {
                delayedAnswers.answer(afterMillis: answer.delayMillis) {
                    self.writeUnlessReset(context: context, status: answer.status, headers: answer.headers, body: answer.body)
                }
            } else {
                write(context: context, status: answer.status, headers: answer.headers, body: answer.body)
            }
            return
        }
        if head.uri == core.fcmTokenEndpoint.path {
            respondFCMTokenEndpoint(context: context, request: request)
            return
        }
        if FCMSendJudge.handles(path: head.uri) {
            respondFCM(context: context, request: request)
            return
        }
        respondAPNs(context: context, request: request)
    }

    func write(context: ChannelHandlerContext, status: Int, headers: [(String, String)], body: String?) {
        let head = HTTPResponseHead(version: .http2, status: HTTPResponseStatus(statusCode: status), headers: HTTPHeaders(headers))
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        if let body { context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(string: body)))), promise: nil) }
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        releaseSlot(context: context)
    }

    /// A delayed answer: the client may have reset the stream while it waited (its slot is given back already).
    func writeUnlessReset(context: ChannelHandlerContext, status: Int, headers: [(String, String)], body: String?) {
        guard context.channel.isActive else { return }
        write(context: context, status: status, headers: headers, body: body)
    }

    func channelInactive(context: ChannelHandlerContext) {
        // The stream ended before its answer was written (a late answer then finds no slot to give back).
        releaseSlot(context: context)
        context.fireChannelInactive()
    }

    private func releaseSlot(context: ChannelHandlerContext) {
        guard holdsSlot else { return }
        holdsSlot = false
        connection.activeStreams -= 1
        if isFCMSend { connection.activeFCMStreams -= 1 }
        // After a GOAWAY the connection closes once every stream it covers has its answer (or has ended).
        if connection.goingAway && connection.activeStreams == 0, let parent = context.channel.parent {
            Self.closeAfterLinger(parent, on: context.eventLoop)
        }
    }

    /// Apple lets a token-auth connection carry one stream until a request authenticates, then more.
    func raiseStreamLimitOnce(context: ChannelHandlerContext) {
        let configuration = core.configuration
        guard !connection.streamLimitRaised, connection.fixedStreamLimit == nil,
              connection.claims != nil || connection.certificateAuthenticated || connection.fcmAuthenticated,
              configuration.maxConcurrentStreams != configuration.initialMaxConcurrentStreams
        else { return }
        connection.streamLimitRaised = true
        let settings = HTTP2Frame(streamID: .rootStream, payload: .settings(.settings([
            HTTP2Setting(parameter: .maxConcurrentStreams, value: configuration.maxConcurrentStreams),
        ])))
        context.channel.parent?.writeAndFlush(settings, promise: nil)
    }

    /// GOAWAY naming the highest stream received; false when one was sent already.
    func goAway(context: ChannelHandlerContext) -> Bool {
        guard !connection.goingAway, let parent = context.channel.parent else { return false }
        // Every stream received so far is answered; the client must open new ones on a new connection.
        connection.goingAway = true
        let lastStreamID = HTTP2StreamID(connection.highestStreamID)
        let goAway = HTTP2Frame(streamID: .rootStream, payload: .goAway(lastStreamID: lastStreamID, errorCode: .noError, opaqueData: nil))
        // Sent from a batch of delayed answers: in a TLS record of its own, after the answers before it.
        delayedAnswers.flushWrittenAnswers()
        parent.writeAndFlush(goAway, promise: nil)
        delayedAnswers.flushWrittenAnswers()
        if connection.activeStreams == 0 {
            Self.closeAfterLinger(parent, on: context.eventLoop)
        }
        return true
    }

    /// How long a connection whose streams are all answered after our GOAWAY stays open for the client to
    /// read the last answers and close it first, as servers do (nginx's lingering close). Closed at once,
    /// a socket with unread input from the client (frames it sent before it saw the GOAWAY) is reset by the
    /// kernel, and a reset throws away the answers still unread in the client's receive buffer: a busy
    /// client then saw requests the emulator had answered as lost, and sent them again.
    static let lingerAfterGoAway = TimeAmount.seconds(2)

    private static func closeAfterLinger(_ parent: Channel, on eventLoop: EventLoop) {
        eventLoop.assumeIsolated().scheduleTask(in: lingerAfterGoAway) { parent.close(promise: nil) }
    }
}
