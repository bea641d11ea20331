import COpenSSL
import Foundation
import ProviderKit
import PushCore

/// OPPO's auth token: `POST /server/v1/auth` with the form `app_key`, `timestamp` (epoch milliseconds; OPPO refuses
/// one more than 10 minutes off its clock) and `sign`, the lower-case hex SHA-256 of app key + timestamp + master
/// secret. The answer `{"code":0,"data":{"auth_token":"..","create_time":<ms>}}` is good for 24 hours from
/// `create_time`; an `AccessTokenCache` renews it when 5 minutes remain and shares it with the app's lanes. OPPO
/// documents no limit on auth calls.
public enum OPPOAuth {
    public static let path = "/server/v1/auth"
    static let lifetimeMillis: Int64 = 86_400_000

    /// The sign for `timestamp` (milliseconds, as sent).
    static func sign(appKey: String, timestamp: Int64, masterSecret: Secret) -> String {
        let text = Array((appKey + String(timestamp) + masterSecret.value).utf8)
        var digest = [UInt8](repeating: 0, count: Int(SHA256_DIGEST_LENGTH))
        _ = text.withUnsafeBufferPointer { SHA256($0.baseAddress, $0.count, &digest) }
        return digest.map { String(format: "%02x", $0) }.joined()
    }

    static func form(appKey: String, timestamp: Int64, masterSecret: Secret) -> String {
        "app_key=\(TokenEndpoint.formEncode(appKey))&timestamp=\(timestamp)&sign=\(sign(appKey: appKey, timestamp: timestamp, masterSecret: masterSecret))"
    }

    /// The cache of one app's auth token, asking `endpoint` (the app's host + `/server/v1/auth`).
    public static func cache(appKey: String, masterSecret: Secret, endpoint: TokenEndpoint, name: String,
                             clock: any TransportClock = SystemTransportClock(),
                             onExchange: (@Sendable (_ granted: Bool) -> Void)? = nil,
                             onChange: (@Sendable (AccessTokenState) -> Void)? = nil) -> AccessTokenCache {
        AccessTokenCache(name: name, service: "OPPO", clock: clock, onChange: onChange) { stopping in
            let grant = exchange(appKey: appKey, masterSecret: masterSecret, endpoint: endpoint, nowMillis: clock.wallMillis(), abandon: stopping)
            if case .granted = grant { onExchange?(true) } else { onExchange?(false) }
            return grant
        }
    }

    /// One auth call (blocking: never on Swift's cooperative pool).
    public static func exchange(appKey: String, masterSecret: Secret, endpoint: TokenEndpoint, nowMillis: Int64,
                                abandon: @escaping @Sendable () -> Bool = { false }) -> TokenGrant {
        let uri = endpoint.uri
        return endpoint.exchange(form: form(appKey: appKey, timestamp: nowMillis, masterSecret: masterSecret), abandon: abandon) { status, body in
            classify(status: status, body: body, nowMillis: nowMillis, uri: uri)
        }
    }

    /// OPPO's answer to an auth call: a token and the seconds it has left; a bad key, sign or timestamp refused;
    /// flow control and server errors a wait.
    static func classify(status: Int, body: [UInt8], nowMillis: Int64, uri: String) -> TokenGrant {
        let document = try? JSONParser.parse(body)
        guard let code = document?["code"]?.exactInteger else {
            return .unavailable(reason: "\(uri) answered HTTP \(status) without an OPPO code")
        }
        let message = document?["message"]?.stringValue.map { Printable.clipped($0, to: 200) } ?? ""
        guard code == 0 else {
            switch code {
            case -2, -1, 13, 55:
                return .unavailable(reason: "\(uri) answered code \(code) \(message)")
            default:
                // 14-30: a wrong app key, sign (16) or timestamp (19: this host's clock), a disabled app.
                return .refused(reason: "\(uri) refused the app key and master secret: code \(code) \(message)")
            }
        }
        guard let token = document?["data"]?["auth_token"]?.stringValue, !token.isEmpty else {
            return .unavailable(reason: "\(uri) answered code 0 without an auth_token")
        }
        // 24 hours from when OPPO made it (its clock), else from now; never under a minute, no arithmetic that traps.
        let created = document?["data"]?["create_time"]?.exactInteger ?? nowMillis
        let (end, overflow) = created.addingReportingOverflow(lifetimeMillis)
        let (left, under) = (overflow ? Int64.max : end).subtractingReportingOverflow(nowMillis)
        let seconds = under ? lifetimeMillis / 1000 : left / 1000
        return .granted(accessToken: Secret(token), expiresIn: min(max(seconds, 60), lifetimeMillis / 1000))
    }
}
