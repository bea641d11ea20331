import Foundation

/// Push Kit v1's `POST /v1/<app_id>/messages:send` (Android, HMS Core), in this order: the path, the bearer
/// (an access token from `HuaweiTokenEndpoint` for this very app: 80200001, or 80200003 once expired), flow
/// control (503), the body (`HuaweiV1Validator`), the app's rights (80300011), the per-app rate (503), a code a
/// test queued, then each token's fate (malformed, or a `tokenAnswers` prefix): 80000000, 80100000 with
/// `illegal_tokens` in `msg`, or 80300007 when none is left.
struct HuaweiSendJudge: Sendable {
    let apps: [String: EmulatorConfiguration.HuaweiApp]
    let registry: AccessTokenRegistry
    let shared: HuaweiShared

    init(settings: EmulatorConfiguration.HuaweiSettings, registry: AccessTokenRegistry, shared: HuaweiShared) {
        apps = Dictionary(settings.apps.map { ($0.appID, $0) }, uniquingKeysWith: { first, _ in first })
        self.registry = registry
        self.shared = shared
    }

    /// `/v1/<id>/messages:send` (and the multi-sender `/v2/<project>/...`, answered the same way): three segments,
    /// unlike FCM's `/v1/projects/<project>/messages:send`.
    static func app(inPath path: String) -> String? {
        let path = path.split(separator: "?", maxSplits: 1).first.map(String.init) ?? path
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0].isEmpty, parts[1] == "v1" || parts[1] == "v2", parts[3] == "messages:send",
              !parts[2].isEmpty, parts[2] != "projects" else { return nil }
        return String(parts[2])
    }

    func judge(_ request: IncomingRequest) -> HuaweiAnswer {
        let now = shared.clock.now
        guard let appID = Self.app(inPath: request.path) else { return .error("80100001", "Unknown path \(request.path).") }
        guard request.method == "POST" else { return .error("80100001", "Only POST is supported.") }
        guard let authorization = request.header("authorization"), authorization.lowercased().hasPrefix("bearer ") else {
            return .error("80200001", "The Authorization header must be \"Bearer <access token>\".")
        }
        switch registry.check(bearer: String(authorization.dropFirst("bearer ".count)), now: now) {
        case .valid(let owner) where owner == appID: break
        case .valid: return .error("80200001", "The access token belongs to another client id than \(appID).")
        case .expired, .revoked: return .error("80200003")
        case .unknown: return .error("80200001", "The access token is not one the token endpoint issued.")
        }
        guard let app = apps[appID] else { return .error("80300002", "Client id \(appID) has no Push Kit app.") }
        if shared.faults.faults.flowControl { return HuaweiAnswer.flowControl }
        let accepted: HuaweiV1Validator.Accepted
        do {
            accepted = try HuaweiV1Validator.validate(request.body)
        } catch let refusal as HuaweiRefusal {
            return refusal.answer
        } catch {
            return .error("80100003")
        }
        if accepted.urgencyHigh && !app.highPriorityRight { return .error("80300011") }
        let faults = shared.faults.faults
        guard shared.rate.admit(app: "v1:" + appID, tokens: accepted.tokens.count, now: now,
                                requestsPerSecond: faults.requestsPerSecond, tokensPerSecond: faults.tokensPerSecond) else {
            return HuaweiAnswer.flowControl
        }
        var answer = shared.perToken(accepted.tokens, queued: shared.faults.next()) { illegal, delivered in
            #"{"success":\#(delivered),"failure":\#(illegal.count),"illegal_tokens":[\#(illegal.map { "\"\(JSONText.escaped($0.token))\"" }.joined(separator: ","))]}"#
        }
        answer.validatedOnly = accepted.validateOnly
        answer.category = accepted.category ?? ""
        return answer
    }
}

/// What Huawei's v1 and v3 sends share: the clock, faults, rate windows, stats and token answers.
struct HuaweiShared: Sendable {
    let clock: VendorClock
    let faults: VendorFaultInjector
    let rate: VendorRate
    let stats: VendorStats
    let tokenAnswers: [EmulatorConfiguration.VendorTokenAnswer]

    /// The reason a token is refused for, if it is: malformed, or a configured prefix.
    func refusal(of token: String) -> String? {
        guard VendorToken.isWellFormed(token) else { return "tokenFormatError" }
        return tokenAnswers.first { token.hasPrefix($0.prefix) }?.reason
    }

    /// The answer for a request that passed every check: a queued code first (80100000 refuses the first token,
    /// 80300007 all of them, others the whole request), else each token's fate. `msg` writes the partial-failure
    /// JSON from the refused tokens and the number delivered.
    func perToken(_ tokens: [String], queued: String?,
                  msg: (_ illegal: [(token: String, reason: String)], _ delivered: Int) -> String) -> HuaweiAnswer {
        var illegal: [(token: String, reason: String)] = []
        var delivered: [String] = []
        switch queued {
        case "80100000"?:
            illegal = [(tokens[0], "tokenFormatError")]
            delivered = Array(tokens.dropFirst())
        case "80300007"?:
            illegal = tokens.map { ($0, "tokenFormatError") }
        case let code?:
            return code == "503" ? HuaweiAnswer.flowControl : .error(code, "(injected)")
        case nil:
            for token in tokens {
                if let reason = refusal(of: token) { illegal.append((token, reason)) } else { delivered.append(token) }
            }
        }
        if illegal.isEmpty { return HuaweiAnswer(status: 200, code: "80000000", msg: "Success", delivered: delivered) }
        let code = delivered.isEmpty ? "80300007" : "80100000"
        return HuaweiAnswer(status: HuaweiAnswer.status(of: code), code: code, msg: msg(illegal, delivered.count),
                            delivered: delivered, refused: illegal.count)
    }
}
