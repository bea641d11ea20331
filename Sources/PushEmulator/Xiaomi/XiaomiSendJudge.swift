import Foundation

/// Xiaomi MiPush's regId send, `POST /v3/message/regid` (several packages) and `/v2/message/regid` (one), with
/// a form-encoded body, in this order: the path, `Authorization: key=<AppSecret>` of a configured app (21301),
/// flow control (HTTP 503), the app's requests per second (10027), the fields (`XiaomiMessageValidator`), a
/// queued code, the day's quota (10034, not for a private channel's messages), then each regId's fate: malformed or a `tokenAnswers` prefix goes to
/// `data.bad_regids`, the rest is delivered.
struct XiaomiSendJudge: Sendable {
    static let paths: Set<String> = ["/v3/message/regid", "/v2/message/regid"]

    /// app secret -> app.
    let apps: [String: EmulatorConfiguration.XiaomiApp]
    let tokenAnswers: [EmulatorConfiguration.VendorTokenAnswer]
    let clock: VendorClock
    let faults: VendorFaultInjector
    let rate: VendorRate
    let quota: XiaomiQuota

    /// Xiaomi's message paths (`/v2/message/...`, `/v3/message/...`): the regId send, or another target the
    /// emulator does not model (alias, user_account, topic, multi_topic, all).
    static func handles(path: String) -> Bool {
        let path = path.split(separator: "?", maxSplits: 1).first.map(String.init) ?? path
        return path.hasPrefix("/v2/message/") || path.hasPrefix("/v3/message/")
    }

    func judge(_ request: IncomingRequest) -> XiaomiAnswer {
        let now = clock.now
        let path = request.path.split(separator: "?", maxSplits: 1).first.map(String.init) ?? request.path
        guard Self.paths.contains(path) else { return .error(10017, "\(path): only regId sends (/v3/message/regid) are emulated.") }
        guard request.method == "POST" else { return .error(10017, "Only POST is supported.") }
        // Xiaomi's scheme is a lower-case "key=".
        guard let authorization = request.header("authorization"), authorization.hasPrefix("key="),
              let app = apps[String(authorization.dropFirst("key=".count)).trimmingCharacters(in: .whitespaces)]
        else { return .error(21301, "Authorization must be key=<AppSecret> of a known app.") }
        let faultsNow = faults.faults
        if faultsNow.flowControl { return XiaomiAnswer.flowControl }
        guard rate.admit(app: app.appSecret, tokens: 0, now: now, requestsPerSecond: faultsNow.requestsPerSecond, tokensPerSecond: nil) else {
            return .error(10027, "Too many requests this second for this app.")
        }
        let form = FormFields.parse(request.body)
        let accepted: XiaomiMessageValidator.Accepted
        do {
            accepted = try XiaomiMessageValidator.validate(form, app: app)
        } catch let refusal as XiaomiMessageValidator.Refusal {
            return refusal.answer
        } catch {
            return .error(10017, "Invalid request.")
        }
        if let code = faults.next().flatMap(Int.init) {
            return code == 503 ? XiaomiAnswer.flowControl : .error(code, "Injected by the emulator.")
        }
        var delivered: [String] = []
        var bad: [String] = []
        for regID in accepted.regIDs {
            if !VendorToken.isWellFormed(regID) || tokenAnswers.contains(where: { regID.hasPrefix($0.prefix) }) {
                bad.append(regID)
            } else {
                delivered.append(regID)
            }
        }
        // The day is read when the messages are counted, not when the request came: a day that rolled over while the
        // request was checked counts it in the new day, as the quota it is checked against.
        // The private (chat) channel is under no quota.
        let onPrivateChannel = accepted.channel.map(app.privateChannels.contains) ?? false
        guard onPrivateChannel || quota.spend(app: app.appSecret, messages: delivered.count, at: clock.now) else {
            return .error(10034, "The app's messages for today are spent; the quota resets at the next Xiaomi day.")
        }
        return XiaomiAnswer(code: 0, reason: "", delivered: delivered, badRegIDs: bad, channel: accepted.channel ?? "")
    }
}
