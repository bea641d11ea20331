import Foundation

/// Huawei's OAuth 2.0 token endpoint (`POST /oauth2/v3/token`, also `/oauth2/v2/token`) with the client-credentials
/// grant Push Kit v1 senders use: `grant_type=client_credentials&client_id=..&client_secret=..`, form-encoded.
/// Answers `{"access_token","expires_in","token_type":"Bearer"}` or Huawei's error JSON
/// (`{"error":<int>,"sub_error":<int>,"error_description":".."}`, HTTP 400) with the codes of Huawei's table.
struct HuaweiTokenEndpoint: Sendable {
    let paths: Set<String>
    /// client id -> secret.
    let secrets: [String: String]
    let registry: AccessTokenRegistry
    let stats: VendorStats

    init(settings: EmulatorConfiguration.HuaweiSettings, registry: AccessTokenRegistry, stats: VendorStats) {
        paths = Set(settings.tokenPaths)
        secrets = Dictionary(settings.apps.map { ($0.appID, $0.clientSecret) }, uniquingKeysWith: { first, _ in first })
        self.registry = registry
        self.stats = stats
    }

    func handles(path: String) -> Bool {
        paths.contains(path.split(separator: "?", maxSplits: 1).first.map(String.init) ?? path)
    }

    func answer(_ request: IncomingRequest, now: Double) -> (status: Int, body: String) {
        let answer = judge(request, now: now)
        stats.tokenRequested(issued: answer.status == 200)
        return answer
    }

    private func judge(_ request: IncomingRequest, now: Double) -> (status: Int, body: String) {
        guard request.method == "POST" else { return (405, Self.error(1101, 0, "unsupported http method: \(request.method)")) }
        let form = FormFields.parse(request.body)
        guard let grantType = form["grant_type"], !grantType.isEmpty else {
            return (400, Self.error(1102, 20181, "missing required parameter: grant_type"))
        }
        guard grantType == "client_credentials" else { return (400, Self.error(1101, 20182, "invalid grant_type")) }
        guard let clientID = form["client_id"], !clientID.isEmpty else {
            return (400, Self.error(1102, 20001, "missing required parameter: client_id"))
        }
        // Huawei's patterns: client_id ^[0-9]{1,64}$, client_secret ^[0-9a-zA-Z=/+]+$.
        guard clientID.count <= 64, clientID.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            return (400, Self.error(1101, 20002, "invalid client_id format"))
        }
        guard let secret = secrets[clientID] else { return (400, Self.error(1203, 12303, "client_id does not exist")) }
        guard let given = form["client_secret"], !given.isEmpty else {
            return (400, Self.error(1101, 20171, "missing required parameter: client_secret"))
        }
        guard given.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "=/+".contains($0)) }) else {
            return (400, Self.error(1101, 20172, "invalid client_secret format"))
        }
        guard given == secret else { return (400, Self.error(1101, 12304, "invalid client_secret")) }
        let (token, expiresIn) = registry.issue(clientEmail: clientID, now: now)
        return (200, #"{"access_token":"\#(token)","expires_in":\#(expiresIn),"token_type":"Bearer"}"#)
    }

    static func error(_ error: Int, _ subError: Int, _ description: String) -> String {
        #"{"sub_error":\#(subError),"error_description":"\#(JSONText.escaped(description))","error":\#(error)}"#
    }
}
