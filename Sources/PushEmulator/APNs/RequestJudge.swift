import Foundation

/// The answer APNs would give.
public struct Answer: Sendable, Equatable {
    public var status: Int
    public var reason: String?
    /// Only with 410 Unregistered: when the token stopped being valid (ms).
    public var timestamp: Int64?
    public var apnsID: String

    public var body: String? {
        guard let reason else { return nil }
        if let timestamp { return "{\"reason\":\"\(reason)\",\"timestamp\":\(timestamp)}" }
        return "{\"reason\":\"\(reason)\"}"
    }
}


/// Apple's checks, in roughly the order APNs applies them. Pure apart from the random fault share.
public struct RequestJudge: Sendable {
    static let pushTypes: Set<String> = ["alert", "background", "voip", "complication", "fileprovider", "mdm", "location",
                                         "liveactivity", "pushtotalk", "widgets", "controls"]
    static let topicSuffixes = [".voip", ".complication", ".pushkit.fileprovider", ".location-query",
                                ".push-type.liveactivity", ".voip-ptt", ".push-type.widgets"]

    let configuration: EmulatorConfiguration
    let verifier: ProviderTokenVerifier

    public init(configuration: EmulatorConfiguration) throws {
        self.configuration = configuration
        self.verifier = try ProviderTokenVerifier(keys: configuration.keys)
    }

    public func judge(_ request: IncomingRequest, connection: ConnectionState, nowSeconds: Int64,
                      random: () -> Double = { Double.random(in: 0..<1) }) -> Answer {
        var apnsID = request.header("apns-id") ?? APNsID.random()
        func answer(_ status: Int, _ reason: String? = nil, timestamp: Int64? = nil) -> Answer {
            Answer(status: status, reason: reason, timestamp: timestamp, apnsID: apnsID)
        }
        if let given = request.header("apns-id"), UUID(uuidString: given) == nil {
            apnsID = APNsID.random()
            return answer(400, "BadMessageId")
        }
        guard request.method == "POST" else { return answer(405, "MethodNotAllowed") }
        guard request.path.hasPrefix("/3/device/") else { return answer(404, "BadPath") }
        let names = request.headers.map(\.name).filter { $0.hasPrefix("apns-") || $0 == "authorization" }
        if Set(names).count != names.count { return answer(400, "DuplicateHeaders") }

        let token = String(request.path.dropFirst("/3/device/".count)).lowercased()
        guard !token.isEmpty else { return answer(400, "MissingDeviceToken") }
        guard token.count >= 16, token.count <= 200, token.count % 2 == 0, token.allSatisfy(\.isHexDigit) else {
            return answer(400, "BadDeviceToken")
        }

        if let rejection = authenticate(request, connection: connection, now: nowSeconds) {
            return answer(rejection.0, rejection.1)
        }

        guard let topic = request.header("apns-topic"), !topic.isEmpty else { return answer(400, "MissingTopic") }
        if !configuration.topics.isEmpty {
            let bundle = Self.topicSuffixes.first { topic.hasSuffix($0) }.map { String(topic.dropLast($0.count)) } ?? topic
            guard configuration.topics.contains(bundle) else { return answer(400, "TopicDisallowed") }
        }
        let pushType = request.header("apns-push-type")
        if let pushType, !Self.pushTypes.contains(pushType) { return answer(400, "InvalidPushType") }
        if let priority = request.header("apns-priority") {
            guard ["10", "5", "1"].contains(priority) else { return answer(400, "BadPriority") }
            if pushType == "background" && priority == "10" { return answer(400, "BadPriority") }
        }
        if let expiration = request.header("apns-expiration"), Int64(expiration) == nil || Int64(expiration)! < 0 {
            return answer(400, "BadExpirationDate")
        }
        if let collapse = request.header("apns-collapse-id"), collapse.utf8.count > 64 { return answer(400, "BadCollapseId") }

        guard !request.body.isEmpty else { return answer(400, "PayloadEmpty") }
        let limit = pushType == "voip" ? 5120 : 4096
        guard request.body.count <= limit else { return answer(413, "PayloadTooLarge") }
        guard (try? JSONSerialization.jsonObject(with: Data(request.body))) is [String: Any] else {
            return answer(400, "BadPayload")  // emulator's name: APNs documents no reason for a body that is not JSON
        }

        if let since = configuration.unregistered[token] { return answer(410, "Unregistered", timestamp: since) }
        if let owner = configuration.tokenTopics[token], owner != topic { return answer(400, "DeviceTokenNotForTopic") }
        if let rule = configuration.scripted.first(where: { token.hasPrefix($0.prefix) }) {
            return answer(rule.status, rule.status == 200 ? nil : rule.reason,
                          timestamp: rule.status == 410 ? (rule.timestamp ?? nowSeconds * 1000) : nil)
        }
        if configuration.failureRate > 0, random() < configuration.failureRate,
           let status = configuration.failureStatuses.randomElement() {
            let reason = [429: "TooManyRequests", 500: "InternalServerError", 503: "ServiceUnavailable"][status] ?? "ServiceUnavailable"
            return answer(status, reason)
        }
        return answer(200)
    }

    /// nil when the request may proceed; otherwise APNs' status and reason.
    private func authenticate(_ request: IncomingRequest, connection: ConnectionState, now: Int64) -> (Int, String)? {
        guard let authorization = request.header("authorization") else {
            return connection.certificateAuthenticated ? nil : (403, "MissingProviderToken")
        }
        guard authorization.lowercased().hasPrefix("bearer ") else { return (403, "InvalidProviderToken") }
        let token = String(authorization.dropFirst("bearer ".count))
        if token == connection.token, let claims = connection.claims {
            return now - claims.issuedAt > configuration.tokenMaxAgeSeconds ? (403, "ExpiredProviderToken") : nil
        }
        let claims: ProviderTokenVerifier.Claims
        do { claims = try verifier.verify(token) } catch { return (403, "InvalidProviderToken") }
        if claims.issuedAt > now + 60 { return (403, "InvalidProviderToken") }
        if now - claims.issuedAt > configuration.tokenMaxAgeSeconds { return (403, "ExpiredProviderToken") }
        if let previous = connection.claims {
            // Apple: one team per connection, and a new token at most every 20 minutes on it.
            if previous.teamID != claims.teamID { return (403, "InvalidProviderToken") }
            if previous.keyID != claims.keyID { return (403, "UnrelatedKeyIdInToken") }
            if now - connection.tokenSince < configuration.tokenMinRenewalSeconds { return (429, "TooManyProviderTokenUpdates") }
        }
        connection.token = token
        connection.claims = claims
        connection.tokenSince = now
        return nil
    }
}
