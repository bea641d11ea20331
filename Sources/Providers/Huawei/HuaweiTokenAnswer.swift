import ProviderKit
import PushCore

/// What Huawei's OAuth endpoint said to a client-credentials grant. Its success is RFC 6749's
/// (`{"access_token","expires_in":3600,"token_type":"Bearer"}`), its errors are its own:
/// `{"error":1101,"sub_error":12304,"error_description":"invalid client_secret"}` with HTTP 400, numbers where
/// RFC 6749 has strings. Read here, so a refusal names Huawei's codes and words rather than "HTTP 400".
enum HuaweiTokenAnswer {
    /// Huawei's figure; used when the answer names none or nonsense.
    static let defaultLifetimeSeconds: Int64 = 3600

    static func classify(status: Int, body: [UInt8], clientID: String, uri: String) -> TokenGrant {
        let document = try? JSONParser.parse(body, maxDepth: 8)
        if status == 200 {
            guard let token = document?["access_token"]?.stringValue, !token.isEmpty else {
                return .unavailable(reason: "Huawei's token endpoint \(uri) answered 200 without an access_token")
            }
            // It goes into a header as it is: a CR, LF or other control byte would cut the header or add another.
            guard token.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
                return .unavailable(reason: "Huawei's token endpoint \(uri) answered an access_token that is not printable ASCII")
            }
            // Clamped, so that no arithmetic on it can trap and no token is used for more than a day.
            let expiresIn = document?["expires_in"]?.exactInteger ?? defaultLifetimeSeconds
            return .granted(accessToken: Secret(token), expiresIn: min(max(expiresIn, 1), 86_400))
        }
        let said = "HTTP \(status)" + errorWords(document)
        // Huawei's server errors, a gateway's, and a rate (the endpoint allows 1,000 tokens per app per 5 minutes):
        // nothing is wrong with the secret; the cache asks again after its backoff.
        if status == 429 || status >= 500 || status < 400 {
            return .unavailable(reason: "Huawei's token endpoint \(uri) answered \(said)")
        }
        return .refused(reason: "Huawei's token endpoint \(uri) refused client \(clientID) (\(said)): "
            + "check app_id and the client secret in AppGallery Connect")
    }

    /// `, error 1101/12304: invalid client_secret` from Huawei's error JSON (numbers or strings), "" without one.
    /// The description is clipped and made printable: it is the server's text, and goes to logs and readiness.
    static func errorWords(_ document: JSONValue?) -> String {
        guard let document else { return "" }
        func code(_ name: String) -> String? {
            guard let value = document[name] else { return nil }
            if let number = value.exactInteger { return String(number) }
            return value.stringValue.map { Printable.clipped($0, to: 40) }
        }
        let codes = [code("error"), code("sub_error")].compactMap { $0 }
        let description = document["error_description"]?.stringValue.map { Printable.clipped($0, to: 160) }
        guard !codes.isEmpty || description != nil else { return "" }
        let numbers = codes.isEmpty ? "" : " error " + codes.joined(separator: "/")
        return "," + numbers + (description.map { ": \($0)" } ?? "")
    }
}
