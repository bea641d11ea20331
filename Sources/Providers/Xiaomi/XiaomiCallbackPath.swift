import Foundation
import ProviderKit
import PushCore

/// Where Xiaomi delivers an app's receipts: `<callback_url>/receipts/xiaomi/<secret path>`. MiPush signs nothing it
/// calls back with, so the URL itself is the credential: its last segment is made from the app's AppSecret (hex of
/// HMAC-SHA256(secret, "receipts:" + package), the first 32 digits: 128 bits), which only Xiaomi (told it in each
/// message) and the worker know. The listener compares it in constant time; a path no app's secret made is refused.
enum XiaomiCallbackPath {
    static let digits = 32

    /// The app's secret path segment.
    static func segment(secret: Secret, package: String) -> String {
        String(HMACSHA256.hex(HMACSHA256.mac(key: secret.value, message: "receipts:" + package)).prefix(digits))
    }

    /// The full callback URL a message carries (`extra.callback`).
    static func url(baseURL: String, segment: String) -> String { "\(baseURL)/receipts/xiaomi/\(segment)" }

    /// What is wrong with a `callback_url`, nil when it is an http(s) URL with a host and no query or fragment.
    static func problem(baseURL: String) -> String? {
        guard let url = URLComponents(string: baseURL), url.scheme == "https" || url.scheme == "http",
              let host = url.host, !host.isEmpty, url.query == nil, url.fragment == nil, !baseURL.contains(where: \.isWhitespace) else {
            return "must be the public http(s)://host[:port][/path] of the receipts listener, not \"\(Printable.clipped(baseURL, to: 80))\""
        }
        return nil
    }
}
