import Foundation
import NIOCore
import NIOHTTP2

extension HTTP2StreamHandler {
    /// Answers one APNs request on this stream (`POST /3/device/<token>`, and any path no other service has: Apple's
    /// 404 BadPath): Apple's checks, counters and recording, the stream limit Apple raises after the first
    /// authenticated request (and collapses after an error, when asked), then the answer after the configured latency
    /// and jitter, and the GOAWAY `goawayAfterStreams` asks for.
    func respondAPNs(context: ChannelHandlerContext, request: IncomingRequest) {
        let configuration = core.configuration
        let answer = core.judge.judge(request, connection: connection, nowSeconds: Int64(Date().timeIntervalSince1970))
        core.stats.record(answer)
        configuration.onAnswer?(String(request.path.dropFirst("/3/device/".count)).lowercased(), answer)
        if answer.status == 200 && core.recorder.enabled {
            core.recorder.record(token: String(request.path.dropFirst("/3/device/".count)).lowercased(), request: request, apnsID: answer.apnsID)
        }
        raiseStreamLimitOnce(context: context)
        collapseOrRestoreStreamLimit(after: answer.status, context: context)

        var headers = [("apns-id", answer.apnsID)]
        if answer.body != nil { headers.append(("content-type", "application/json")) }
        // Clamped, so that no setting can make the sum trap.
        let longest = DelayedAnswers.longestDelayMillis
        let delay = min(max(0, configuration.latencyMillis), longest)
            + (configuration.jitterMillis > 0 ? Int.random(in: 0...min(configuration.jitterMillis, longest)) : 0)
        if delay > 0 {
            delayedAnswers.answer(afterMillis: delay) {
                self.writeUnlessReset(context: context, status: answer.status, headers: headers, body: answer.body)
                self.goAwayIfDue(context: context)
            }
        } else {
            write(context: context, status: answer.status, headers: headers, body: answer.body)
            goAwayIfDue(context: context)
        }
    }

    private func collapseOrRestoreStreamLimit(after status: Int, context: ChannelHandlerContext) {
        guard core.configuration.collapseStreamsOnError, connection.streamLimitRaised, connection.fixedStreamLimit == nil else { return }
        let collapse = status != 200
        guard collapse != connection.streamLimitCollapsed else { return }
        connection.streamLimitCollapsed = collapse
        if collapse { core.stats.streamLimitCollapsed() }
        let value = collapse ? 1 : core.configuration.maxConcurrentStreams
        let settings = HTTP2Frame(streamID: .rootStream, payload: .settings(.settings([
            HTTP2Setting(parameter: .maxConcurrentStreams, value: value),
        ])))
        context.channel.parent?.writeAndFlush(settings, promise: nil)
    }

    private func goAwayIfDue(context: ChannelHandlerContext) {
        guard let limit = core.configuration.goawayAfterStreams, connection.requests >= limit else { return }
        if goAway(context: context) { core.stats.goAwaySent() }
    }
}
