import Foundation

/// Push Kit v3's `POST /v3/<project_id>/messages:send` (HarmonyOS 5+), in this order: the path, the bearer (a
/// PS256 JWT of a configured service account for this project: `HuaweiJWTVerifier`), flow control (503), the
/// `push-type` header and body (`HuaweiV3Validator`), the per-app rate (503), a queued code, then each token's
/// fate: 80000000, or 80100000 / 80300007 with `msg` = `{"success":N,"failure":M,"illegalTokens":{"<reason>":[..]}}`.
struct HuaweiV3SendJudge: Sendable {
    let verifier: HuaweiJWTVerifier
    let shared: HuaweiShared

    static func project(inPath path: String) -> String? {
        let path = path.split(separator: "?", maxSplits: 1).first.map(String.init) ?? path
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0].isEmpty, parts[1] == "v3", parts[3] == "messages:send", !parts[2].isEmpty else { return nil }
        return String(parts[2])
    }

    func judge(_ request: IncomingRequest) -> HuaweiAnswer {
        let now = shared.clock.now
        guard let project = Self.project(inPath: request.path) else { return .error("80100001", "Unknown path \(request.path).") }
        guard request.method == "POST" else { return .error("80100001", "Only POST is supported.") }
        guard let authorization = request.header("authorization"), authorization.lowercased().hasPrefix("bearer ") else {
            return .error("80200001", "The Authorization header must be \"Bearer <JWT>\".")
        }
        switch verifier.verify(String(authorization.dropFirst("bearer ".count)), project: project, now: now,
                               authority: request.header("host")) {
        case .failure(let refusal): return refusal.answer
        case .success: break
        }
        if shared.faults.faults.flowControl { return HuaweiAnswer.flowControl }
        let accepted: HuaweiV3Validator.Accepted
        do {
            accepted = try HuaweiV3Validator.validate(request.body, pushType: request.header("push-type"))
        } catch let refusal as HuaweiRefusal {
            return refusal.answer
        } catch {
            return .error("80100003")
        }
        let faults = shared.faults.faults
        guard shared.rate.admit(app: "v3:" + project, tokens: accepted.tokens.count, now: now,
                                requestsPerSecond: faults.requestsPerSecond, tokensPerSecond: faults.tokensPerSecond) else {
            return HuaweiAnswer.flowControl
        }
        var answer = shared.perToken(accepted.tokens, queued: shared.faults.next()) { illegal, delivered in
            var byReason: [String: [String]] = [:]
            for (token, reason) in illegal { byReason[reason, default: []].append(token) }
            let groups = byReason.keys.sorted().map { reason in
                "\"\(JSONText.escaped(reason))\":[" + byReason[reason]!.map { "\"\(JSONText.escaped($0))\"" }.joined(separator: ",") + "]"
            }
            return #"{"success":\#(delivered),"failure":\#(illegal.count),"illegalTokens":{\#(groups.joined(separator: ","))}}"#
        }
        answer.category = accepted.category ?? ""
        return answer
    }
}
