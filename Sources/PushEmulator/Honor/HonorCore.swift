import Foundation

/// The Honor Push side as the router sees it (`EmulatedService`): the OAuth token endpoint (`/auth/token`, the
/// client-credentials grant) and sends (`/api/v1/<appId>/sendMessage`, a bearer of the app's client and a
/// `timestamp` header of epoch milliseconds within 10 minutes of its clock, 1 to 1,000 tokens), answered
/// `{"code":200,"data":{"sendResult":true,"failTokens":[..],"expireTokens":[..]}}` or an HTTP-like code.
struct HonorCore: EmulatedService {
    static let vendor = "Honor"
    static let title = "Honor Push"
    static let tokenPath = "/auth/token"
    static let sendPrefix = "/api/v1/"
    static let sendSuffix = "/sendMessage"

    let settings: EmulatorConfiguration.HonorSettings
    let stats = VendorStats()
    let clock = VendorClock()
    let registry: AccessTokenRegistry
    let injector: VendorFaultInjector
    let rate = VendorRate()
    let side: HonorSide

    init(configuration: EmulatorConfiguration) throws {
        settings = configuration.honor
        registry = AccessTokenRegistry(lifetimeSeconds: settings.accessTokenLifetimeSeconds)
        injector = VendorFaultInjector(settings.faults)
        side = HonorSide(stats: stats, clock: clock, accessTokens: registry, injector: injector)
    }

    var faults: VendorFaults { injector.faults }

    static func appID(inPath path: String) -> String? {
        let plain = path.split(separator: "?", maxSplits: 1).first.map(String.init) ?? path
        guard plain.hasPrefix(sendPrefix), plain.hasSuffix(sendSuffix) else { return nil }
        let id = plain.dropFirst(sendPrefix.count).dropLast(sendSuffix.count)
        return id.isEmpty || id.contains("/") ? nil : String(id).removingPercentEncoding
    }

    func handles(path: String) -> Bool { path == Self.tokenPath || Self.appID(inPath: path) != nil }

    func isAuthEndpoint(path: String) -> Bool { path == Self.tokenPath }

    func answer(_ request: IncomingRequest) -> VendorResponse? {
        if request.path == Self.tokenPath { return token(request) }
        guard let appID = Self.appID(inPath: request.path) else { return nil }
        let (status, code, body, delivered, refused, importance) = send(request, appID: appID)
        stats.record(request, status: status, code: code, delivered: delivered, refused: refused, validatedOnly: false,
                     classification: importance, second: Int64(clock.now.rounded(.down)))
        return VendorResponse(status: status, headers: [("content-type", "application/json;charset=UTF-8")], body: body)
    }

    private func token(_ request: IncomingRequest) -> VendorResponse {
        let form = FormFields.parse(request.body)
        let json = [("content-type", "application/json")]
        guard registry.noteRequest() else {
            stats.tokenRequested(issued: false)
            return VendorResponse(status: 503, headers: json, body: #"{"error":"temporarily_unavailable"}"#)
        }
        guard form["grant_type"] == "client_credentials", let client = form["client_id"],
              let app = settings.apps.first(where: { $0.clientID == client }), form["client_secret"] == app.clientSecret else {
            stats.tokenRequested(issued: false)
            return VendorResponse(status: 401, headers: json, body: #"{"error":"invalid_client","error_description":"client authentication failed"}"#)
        }
        let (token, expiresIn) = registry.issue(clientEmail: app.clientID, now: clock.now)
        stats.tokenRequested(issued: true)
        return VendorResponse(status: 200, headers: json, body: #"{"access_token":"\#(token)","expires_in":\#(expiresIn),"token_type":"Bearer"}"#)
    }

    private static func answer(_ code: Int, _ message: String) -> String {
        #"{"code":\#(code),"message":"\#(JSONText.escaped(message))"}"#
    }

    // swiftlint:disable:next large_tuple
    private func send(_ request: IncomingRequest, appID: String)
        -> (status: Int, code: String, body: String, delivered: [String], refused: Int, importance: String?) {
        guard let app = settings.apps.first(where: { $0.appID == appID }) else {
            return (200, "403", Self.answer(403, "the app id is unknown"), [], 0, nil)
        }
        let bearer = request.headers.first { $0.name == "authorization" }?.value ?? ""
        guard bearer.hasPrefix("Bearer "), case .valid(let client) = registry.check(bearer: String(bearer.dropFirst(7)), now: clock.now),
              client == app.clientID else {
            return (401, "401", Self.answer(401, "the access token is invalid or expired"), [], 0, nil)
        }
        guard let stamp = request.headers.first(where: { $0.name == "timestamp" }).flatMap({ Double($0.value) }),
              abs(stamp / 1000 - clock.now) <= 600 else {
            return (200, "400", Self.answer(400, "timestamp missing or more than 10 minutes off"), [], 0, nil)
        }
        guard let document = try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any],
              let tokens = document["token"] as? [String], (1...1000).contains(tokens.count) else {
            return (200, "400", Self.answer(400, "token must list 1 to 1,000 tokens"), [], 0, nil)
        }
        if injector.faults.flowControl { return (503, "503", "busy", [], 0, nil) }
        if let code = injector.next() { return (200, code, Self.answer(Int(code) ?? 500, "injected"), [], 0, nil) }
        if !rate.admit(app: app.appID, tokens: tokens.count, now: clock.now, requestsPerSecond: injector.faults.requestsPerSecond,
                       tokensPerSecond: injector.faults.tokensPerSecond) {
            return (200, "429", Self.answer(429, "over the app's rate"), [], 0, nil)
        }
        let android = document["android"] as? [String: Any]
        let importance = (android?["notification"] as? [String: Any])?["importance"] as? String
        var expired: [String] = [], failed: [String] = [], delivered: [String] = []
        for token in tokens {
            if settings.expirePrefixes.contains(where: token.hasPrefix) {
                expired.append(token)
            } else if settings.failPrefixes.contains(where: token.hasPrefix) {
                failed.append(token)
            } else {
                delivered.append(token)
            }
        }
        func list(_ tokens: [String]) -> String { "[" + tokens.map { #""\#(JSONText.escaped($0))""# }.joined(separator: ",") + "]" }
        let body = #"{"code":200,"message":"success","data":{"sendResult":true,"requestId":"\#(UUID().uuidString)","#
            + #""failTokens":\#(list(failed)),"expireTokens":\#(list(expired))}}"#
        return (200, "200", body, delivered, expired.count, importance ?? "")
    }
}
