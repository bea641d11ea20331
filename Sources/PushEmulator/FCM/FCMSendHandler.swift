import Foundation
import NIOCore

/// Everything `messages:send` shares across connections.
struct FCMCore: Sendable {
    let judge: FCMSendJudge
    let stats: FCMStats
    let faults: FCMFaultInjector
    let recorder: DeliveryRecorder
    let onAnswer: (@Sendable (_ token: String, _ answer: FCMAnswer) -> Void)?
}

extension HTTP2StreamHandler {
    /// FCM's OAuth 2.0 token endpoint: not a notification (no stats, no recording, no faults but its own).
    func respondFCMTokenEndpoint(context: ChannelHandlerContext, request: IncomingRequest) {
        let (status, json) = core.fcmTokenEndpoint.answer(request)
        write(context: context, status: status, headers: [("content-type", "application/json"), ("cache-control", "no-store")], body: json)
    }

    /// Answers one FCM request (a path under `/v1/`) on this stream, after the injected latency, and sends
    /// the GOAWAY the faults ask for once the answer is out.
    func respondFCM(context: ChannelHandlerContext, request: IncomingRequest) {
        let fcm = core.fcm
        connection.fcmRequests += 1
        let answer = fcm.judge.judge(request)
        fcm.stats.record(request, answer: answer)
        fcm.onAnswer?(answer.token ?? "", answer)
        if answer.status == 200, !answer.validatedOnly, let token = answer.token, fcm.recorder.enabled {
            fcm.recorder.recordFCM(token: token, request: request, answer: answer)
        }
        if answer.authenticated && !connection.fcmAuthenticated {
            connection.fcmAuthenticated = true
            raiseStreamLimitOnce(context: context)
        }
        var headers = [("content-type", "application/json; charset=UTF-8")]
        if let retryAfter = answer.retryAfter { headers.append(("retry-after", retryAfter)) }
        let goAwayAfter = fcm.faults.faults.goawayAfterStreams
        let send = {
            self.writeUnlessReset(context: context, status: answer.status, headers: headers, body: answer.body)
            if let limit = goAwayAfter, self.connection.fcmRequests >= limit, self.goAway(context: context) {
                fcm.stats.goAwaySent()
            }
        }
        let delay = fcm.faults.delayMillis()
        if delay > 0 {
            delayedAnswers.answer(afterMillis: delay, send)
        } else {
            send()
        }
    }
}

extension DeliveryRecorder {
    /// One JSON line per delivered FCM message: `provider` "fcm", `token`, `name` (the message name answered),
    /// `request` (the body as it came: already checked to be JSON), `received_at` (ms).
    func recordFCM(token: String, request: IncomingRequest, answer: FCMAnswer) {
        var line: [UInt8] = Array("{".utf8)
        Self.appendString("provider", "fcm", to: &line)
        Self.appendString("token", token, to: &line)
        if let name = (try? JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any])?["name"] as? String {
            Self.appendString("name", name, to: &line)
        }
        line.append(contentsOf: Array("\"request\":".utf8))
        line.append(contentsOf: request.body.map { $0 == 0x0a || $0 == 0x0d ? 0x20 : $0 })
        line.append(contentsOf: Array(",\"received_at\":\(Int64(Date().timeIntervalSince1970 * 1000))}\n".utf8))
        append(line)
    }
}
