import COpenSSL
import ProviderKit
import PushCore

/// vivo's auth token: `POST /message/auth` with `{"appId","appKey","timestamp","sign"}` (epoch milliseconds, within
/// 10 minutes of vivo's clock; the sign the lower-case hex MD5 of app id + app key + timestamp + app secret), answered
/// `{"result":0,"desc":"..","authToken":".."}`, sent as the `authToken` header of every other call. A token lasts a
/// day and several may coexist; vivo advises renewing every hour or two and allows 10 auth calls a second per app:
/// each worker's `AccessTokenCache` asks once an hour, one call at a time, at most one a second.
public enum VivoAuth {
    public static let path = "/message/auth"
    /// Renewed hourly, as vivo advises (the token itself lasts a day).
    static let keptSeconds: Int64 = 3600

    static func sign(appID: String, appKey: String, timestamp: Int64, appSecret: Secret) -> String {
        let text = Array((appID + appKey + String(timestamp) + appSecret.value).utf8)
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        _ = text.withUnsafeBufferPointer { EVP_Digest($0.baseAddress, $0.count, &digest, &length, EVP_md5(), nil) }
        return digest.prefix(Int(length)).map { byte in
            let hex = Array("0123456789abcdef".utf8)
            return String(decoding: [hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]], as: UTF8.self)
        }.joined()
    }

    static func body(app: VivoApp, timestamp: Int64, appSecret: Secret) -> String {
        let document = JSONValue.object([
            JSONMember(key: "appId", value: app.appIDValue),
            JSONMember(key: "appKey", value: .string(app.appKey)),
            JSONMember(key: "timestamp", value: .number(String(timestamp))),
            JSONMember(key: "sign", value: .string(sign(appID: app.appID, appKey: app.appKey, timestamp: timestamp, appSecret: appSecret))),
        ])
        return String(decoding: JSONWriter.canonical(document), as: UTF8.self)
    }

    public static func cache(app: VivoApp, appSecret: Secret, endpoint: TokenEndpoint, clock: any TransportClock = SystemTransportClock(),
                             onExchange: (@Sendable (_ granted: Bool) -> Void)? = nil,
                             onChange: (@Sendable (AccessTokenState) -> Void)? = nil) -> AccessTokenCache {
        AccessTokenCache(name: app.topic, service: "vivo", clock: clock, onChange: onChange) { stopping in
            let grant = exchange(app: app, appSecret: appSecret, endpoint: endpoint, nowMillis: clock.wallMillis(), abandon: stopping)
            if case .granted = grant { onExchange?(true) } else { onExchange?(false) }
            return grant
        }
    }

    /// One auth call (blocking: never on Swift's cooperative pool).
    public static func exchange(app: VivoApp, appSecret: Secret, endpoint: TokenEndpoint, nowMillis: Int64,
                                abandon: @escaping @Sendable () -> Bool = { false }) -> TokenGrant {
        switch endpoint.post(body: body(app: app, timestamp: nowMillis, appSecret: appSecret), contentType: "application/json;charset=UTF-8",
                             abandon: abandon) {
        case .failure(let reason): return .unavailable(reason: reason.description)
        case .success(let answer): return classify(status: answer.status, body: answer.body, uri: endpoint.uri)
        }
    }

    /// vivo's answer to an auth call: 10250 (too many auth calls) and server errors are a wait; 10200-10207 (a
    /// missing or wrong id, key, sign or timestamp) a refusal.
    static func classify(status: Int, body: [UInt8], uri: String) -> TokenGrant {
        let document = try? JSONParser.parse(body)
        guard let result = document?["result"]?.exactInteger else {
            return .unavailable(reason: "\(uri) answered HTTP \(status) without a vivo result")
        }
        let desc = document?["desc"]?.stringValue.map { Printable.clipped($0, to: 200) } ?? ""
        guard result == 0 else {
            if (10200...10207).contains(result) {
                return .refused(reason: "\(uri) refused the app id, key and secret: result \(result) \(desc)")
            }
            return .unavailable(reason: "\(uri) answered result \(result) \(desc)")
        }
        guard let token = document?["authToken"]?.stringValue, !token.isEmpty else {
            return .unavailable(reason: "\(uri) answered result 0 without an authToken")
        }
        return .granted(accessToken: Secret(token), expiresIn: keptSeconds)
    }
}
