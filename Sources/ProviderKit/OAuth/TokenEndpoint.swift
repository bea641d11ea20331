import CCurl
import Foundation
import PushCore

/// What the token endpoint said to one JWT-bearer grant, sorted by what the caller must do.
public enum TokenGrant: Sendable, Equatable, CustomStringConvertible {
    /// An access token, valid for `expiresIn` seconds from the request.
    case granted(accessToken: Secret, expiresIn: Int64)
    /// No answer, a 5xx or 429, or an answer that makes no sense: nothing is wrong with the key, wait and retry.
    case unavailable(reason: String)
    /// The endpoint refuses the key or the assertion (`invalid_grant`, 400/401/403): a credential problem no
    /// retry soon fixes; the app pauses.
    case refused(reason: String)

    public var description: String {
        switch self {
        case .granted(_, let expiresIn): return "granted (expires in \(expiresIn) s)"
        case .unavailable(let reason): return "unavailable: \(reason)"
        case .refused(let reason): return "refused: \(reason)"
        }
    }
}

/// An OAuth 2.0 token endpoint (a service account's `token_uri`, or a provider block's): POSTs the grant
/// `grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer&assertion=<JWT>` (or any other: `exchange(form:)`) as a
/// form over HTTPS (HTTP/2 when the server offers it, else HTTP/1.1) with libcurl's easy interface. `exchange`
/// blocks: call it on a thread of its own, never on Swift's cooperative pool (`AccessTokenCache` does).
public struct TokenEndpoint: Sendable, CustomStringConvertible {
    public static let grantType = "urn:ietf:params:oauth:grant-type:jwt-bearer"
    /// More than any token answer; a larger body is cut (and then does not parse).
    static let maxBodyBytes = 64 * 1024

    public let uri: String
    /// An extra CA to trust (the emulator's, in tests); empty: the system's.
    public let caFile: String
    public let timeoutMillis: Int

    public init(uri: String, caFile: String = "", timeoutMillis: Int = 10_000) {
        self.uri = uri
        self.caFile = caFile
        self.timeoutMillis = max(1, timeoutMillis)
    }

    public var description: String { "TokenEndpoint(\(uri))" }

    /// One grant: the assertion for the answer. Blocks for up to `timeoutMillis`, or until `abandon` says so
    /// (asked at least once a second, also while connecting: a shutdown need not wait for a silent endpoint).
    public func exchange(assertion: String, abandon: @escaping @Sendable () -> Bool = { false }) -> TokenGrant {
        exchange(form: "grant_type=\(Self.formEncode(Self.grantType))&assertion=\(Self.formEncode(assertion))", abandon: abandon)
    }

    /// One grant of any type: `form` is the whole request body, already form-encoded (the JWT-bearer grant above,
    /// or a client-credentials grant, as a provider module's OAuth endpoint takes). The answer is read as RFC 6749
    /// section 5 and Google have it, unless `classify` reads it (an endpoint whose errors are its own, such as
    /// numeric `error` and `sub_error` codes); a failure to reach the endpoint is `.unavailable` either way. Blocks like
    /// `exchange(assertion:)`: never call it on Swift's cooperative pool.
    public func exchange(form: String, abandon: @escaping @Sendable () -> Bool = { false },
                         classify: ((_ status: Int, _ body: [UInt8]) -> TokenGrant)? = nil) -> TokenGrant {
        switch post(body: form, contentType: "application/x-www-form-urlencoded", abandon: abandon) {
        case .failure(let reason):
            return .unavailable(reason: reason.description)
        case .success(let answer):
            return classify?(answer.status, answer.body) ?? Self.classify(status: answer.status, body: answer.body, uri: uri)
        }
    }

    /// Why a POST got no answer: abandoned (shutting down) or the endpoint unreachable, in words for a log line.
    public struct Unanswered: Error, CustomStringConvertible {
        public let description: String
    }

    /// One POST of `body` (`contentType`, and any `headers` as `name: value` lines) to `uri`, over HTTPS (HTTP/2
    /// when the server offers it), answered with its status and body (at most 64 KB kept). Blocks like
    /// `exchange(form:)`: never call it on Swift's cooperative pool. For a provider's own calls besides its token
    /// (a vendor's auth call in JSON, a list body saved before a list push).
    public func post(body: String, contentType: String, headers extra: [String] = [],
                     abandon: @escaping @Sendable () -> Bool = { false }) -> Result<(status: Int, body: [UInt8]), Unanswered> {
        CurlGlobal.initialize()
        guard let easy = curl_easy_init() else { return .failure(Unanswered(description: "libcurl: cannot create a handle")) }
        defer { curl_easy_cleanup(easy) }
        let response = ResponseBuffer(abandon: abandon)
        let errorText = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        errorText.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        defer { errorText.deallocate() }
        var headers: UnsafeMutablePointer<curl_slist>? = curl_slist_append(nil, "content-type: \(contentType)")
        headers = curl_slist_append(headers, "accept: application/json")
        for line in extra { headers = curl_slist_append(headers, line) }
        defer { curl_slist_free_all(headers) }

        let code: CURLcode = withExtendedLifetime(response) {
            body.withCString { body in
                _ = curlx_easy_ptr(easy, CURLOPT_URL, uri)
                _ = curlx_easy_long(easy, CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS))
                _ = curlx_easy_long(easy, CURLOPT_NOSIGNAL, 1)
                _ = curlx_easy_long(easy, CURLOPT_POST, 1)
                _ = curlx_easy_ptr(easy, CURLOPT_POSTFIELDS, body)
                _ = curlx_easy_off(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(strlen(body)))
                _ = curlx_easy_ptr(easy, CURLOPT_HTTPHEADER, headers)
                _ = curlx_easy_long(easy, CURLOPT_TIMEOUT_MS, timeoutMillis)
                _ = curlx_easy_long(easy, CURLOPT_CONNECTTIMEOUT_MS, timeoutMillis)
                _ = curlx_easy_ptr(easy, CURLOPT_ERRORBUFFER, errorText)
                // Only HTTPS (and plain HTTP for a loopback test endpoint): never FILE, FTP, ... from a key file.
                _ = curlx_easy_ptr(easy, CURLOPT_PROTOCOLS_STR, "https,http")
                if !caFile.isEmpty { _ = curlx_easy_ptr(easy, CURLOPT_CAINFO, caFile) }
                _ = curlx_easy_ptr(easy, CURLOPT_WRITEDATA, Unmanaged.passUnretained(response).toOpaque())
                _ = curlx_easy_write_cb(easy, { data, size, count, context in
                    guard let context else { return 0 }
                    let (length, overflow) = size.multipliedReportingOverflow(by: count)
                    guard !overflow else { return 0 }
                    let buffer = Unmanaged<ResponseBuffer>.fromOpaque(context).takeUnretainedValue()
                    if let data, buffer.bytes.count < TokenEndpoint.maxBodyBytes {
                        let kept = min(length, TokenEndpoint.maxBodyBytes - buffer.bytes.count)
                        data.withMemoryRebound(to: UInt8.self, capacity: kept) {
                            buffer.bytes.append(contentsOf: UnsafeBufferPointer(start: $0, count: kept))
                        }
                    }
                    return length
                })
                _ = curlx_easy_ptr(easy, CURLOPT_XFERINFODATA, Unmanaged.passUnretained(response).toOpaque())
                _ = curlx_easy_xferinfo_cb(easy, { context, _, _, _, _ in
                    guard let context else { return 0 }
                    return Unmanaged<ResponseBuffer>.fromOpaque(context).takeUnretainedValue().abandon() ? 1 : 0
                })
                _ = curlx_easy_long(easy, CURLOPT_NOPROGRESS, 0)
                return curl_easy_perform(easy)
            }
        }
        if code == CURLE_ABORTED_BY_CALLBACK {
            return .failure(Unanswered(description: "request to \(uri) abandoned (shutting down)"))
        }
        guard code == CURLE_OK else {
            let detail = String(cString: errorText)
            let text = detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail
            return .failure(Unanswered(description: "token endpoint \(uri) unreachable: \(text)"))
        }
        return .success((curlx_response_code(easy), response.bytes))
    }

    /// The answer's meaning (Google's token endpoint, RFC 6749 section 5).
    static func classify(status: Int, body: [UInt8], uri: String) -> TokenGrant {
        let document = try? JSONParser.parse(body)
        if status == 200 {
            guard let token = document?["access_token"]?.stringValue, !token.isEmpty else {
                return .unavailable(reason: "token endpoint \(uri) answered 200 without an access_token")
            }
            // Absent or nonsense: an hour, Google's figure. Clamped so that no arithmetic on it can trap.
            let expiresIn = document?["expires_in"]?.exactInteger ?? 3600
            return .granted(accessToken: Secret(token), expiresIn: min(max(expiresIn, 1), 86_400))
        }
        let error = document?["error"]?.stringValue ?? ""
        let detail = document?["error_description"]?.stringValue.map { Printable.clipped($0, to: 200) } ?? ""
        let said = error.isEmpty ? "HTTP \(status)" : "HTTP \(status) \(error)" + (detail.isEmpty ? "" : ": \(detail)")
        if status == 429 || status >= 500 || status < 400 {
            return .unavailable(reason: "token endpoint \(uri) answered \(said)")
        }
        if error == "invalid_grant" {
            return .refused(reason: "token endpoint \(uri) refused the service account's assertion (\(said)). Clock skew is the "
                + "classic cause: check that this host's clock is synchronized (NTP); otherwise the key was deleted or disabled")
        }
        return .refused(reason: "token endpoint \(uri) refused the service account (\(said))")
    }

    /// application/x-www-form-urlencoded: everything but unreserved characters percent-encoded.
    public static func formEncode(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF".utf8)
                out += "%" + String(Unicode.Scalar(hex[Int(byte >> 4)])) + String(Unicode.Scalar(hex[Int(byte & 0x0F)]))
            }
        }
        return out
    }
}

/// The answer's body while libcurl writes it, and whether to give up (one request, one thread).
private final class ResponseBuffer {
    var bytes: [UInt8] = []
    let abandon: @Sendable () -> Bool
    init(abandon: @escaping @Sendable () -> Bool) { self.abandon = abandon }
}
