import CCurl
import Dispatch
import ProviderKit
import PushCore

/// A reusable easy handle. Options that never change are set once; per request only the URL, the
/// header list and the body pointer change. The response body (a small error JSON, or a vendor's list of bad tokens)
/// is collected here.
final class RequestSlot {
    let easy: UnsafeMutableRawPointer
    var body: [UInt8] = []
    /// The HTTP status this transfer received, parsed from its own status line; 0 until one arrives.
    /// CURLINFO_RESPONSE_CODE cannot be trusted for a failed transfer on a reused handle: it may still
    /// hold the previous transfer's 200.
    var status = 0
    /// The scheduler's id of the request in flight; nil while the slot is idle.
    var id: Int?
    /// Kept while in flight: libcurl points at the job's payload (or the slot's own body) and at the header list.
    var job: JobContext?
    var headers: CurlHeaderList?
    /// When the request was handed to libcurl (uptime nanoseconds); its deadline starts later, on the wire.
    var startedAt: UInt64 = 0
    /// How many times libcurl sent this transfer's request. More than once means libcurl sent it again on
    /// its own (7.88 does, up to 5 times, after REFUSED_STREAM, after a GOAWAY or on a reused connection that
    /// turned out dead).
    var sends = 0
    /// The answer's `retry-after` header (a vendor's 503 or 429), as the service's classifier reads it: nil without one.
    var retryAfter: String?

    /// Longest response body kept (`TransportSettings.responseBodyLimit`): the error body of a service with a request
    /// per device is a few dozen bytes, a vendor's answer listing the bad tokens of a batch of 1,000 some kilobytes.
    let bodyLimit: Int

    init(settings: TransportSettings, connections: ConnectionCounter) {
        easy = curl_easy_init()
        bodyLimit = max(256, settings.responseBodyLimit)
        connections.attach(to: easy)
        let me = Unmanaged.passUnretained(self).toOpaque()
        _ = curlx_easy_ptr(easy, CURLOPT_PRIVATE, me)
        _ = curlx_easy_ptr(easy, CURLOPT_WRITEDATA, me)
        _ = curlx_easy_write_cb(easy, { data, size, count, context in
            let slot = Unmanaged<RequestSlot>.fromOpaque(context!).takeUnretainedValue()
            let length = size * count
            if let data, slot.body.count < slot.bodyLimit {
                data.withMemoryRebound(to: UInt8.self, capacity: length) {
                    slot.body.append(contentsOf: UnsafeBufferPointer(start: $0, count: min(length, slot.bodyLimit - slot.body.count)))
                }
            }
            return length
        })
        // Called each time libcurl is about to send the request: the only trace its own re-sends leave.
        _ = curlx_easy_ptr(easy, CURLOPT_PREREQDATA, me)
        _ = curlx_easy_prereq_cb(easy, { context, _, _, _, _ in
            Unmanaged<RequestSlot>.fromOpaque(context!).takeUnretainedValue().sends += 1
            return 0  // CURL_PREREQFUNC_OK
        })
        _ = curlx_easy_ptr(easy, CURLOPT_HEADERDATA, me)
        _ = curlx_easy_header_cb(easy, { data, size, count, context in
            let slot = Unmanaged<RequestSlot>.fromOpaque(context!).takeUnretainedValue()
            let length = size * count
            // "HTTP/2 200 " (libcurl writes the HTTP/2 :status as a status line).
            if let data, length >= 12, slot.status == 0 {
                data.withMemoryRebound(to: UInt8.self, capacity: length) { line in
                    if line[0] == UInt8(ascii: "H"), line[1] == UInt8(ascii: "T"),
                       let space = (0..<min(length, 16)).first(where: { line[$0] == UInt8(ascii: " ") }), space + 3 < length {
                        var code = 0
                        for index in space + 1...space + 3 where (48...57).contains(line[index]) {
                            code = code * 10 + Int(line[index] - 48)
                        }
                        if code >= 100 { slot.status = code }
                    }
                }
            }
            if let data, length > 12 {
                data.withMemoryRebound(to: UInt8.self, capacity: length) { line in
                    if let value = RequestSlot.retryAfter(inHeaderLine: UnsafeBufferPointer(start: line, count: length)) {
                        slot.retryAfter = value
                    }
                }
            }
            return length
        })
        // h2 where the server offers it by ALPN, HTTP/1.1 where it does not (keep-alive: the multi handle's
        // connection pool); HTTP/1.1 alone when the settings say so.
        _ = curlx_easy_long(easy, CURLOPT_HTTP_VERSION, Int(settings.offersHTTP2 ? CURL_HTTP_VERSION_2TLS : CURL_HTTP_VERSION_1_1))
        _ = curlx_easy_long(easy, CURLOPT_PIPEWAIT, 1)
        _ = curlx_easy_long(easy, CURLOPT_POST, 1)
        _ = curlx_easy_long(easy, CURLOPT_NOSIGNAL, 1)
        _ = curlx_easy_long(easy, CURLOPT_TCP_KEEPALIVE, 1)
        // No CURLOPT_TIMEOUT: it would count the wait for a free stream. The transport times requests from
        // PRETRANSFER (on the wire) itself; opening a connection has its own limit.
        _ = curlx_easy_long(easy, CURLOPT_CONNECTTIMEOUT_MS, settings.requestTimeoutMillis)
        if !settings.caFile.isEmpty { _ = curlx_easy_ptr(easy, CURLOPT_CAINFO, settings.caFile) }
        if let certificate = settings.certificateFile {
            let isPKCS12 = certificate.lowercased().hasSuffix(".p12") || certificate.lowercased().hasSuffix(".pfx")
            _ = curlx_easy_ptr(easy, CURLOPT_SSLCERT, certificate)
            _ = curlx_easy_ptr(easy, CURLOPT_SSLCERTTYPE, isPKCS12 ? "P12" : "PEM")
            if !isPKCS12 { _ = curlx_easy_ptr(easy, CURLOPT_SSLKEY, certificate) }
            if !settings.certificatePassword.isEmpty { _ = curlx_easy_ptr(easy, CURLOPT_KEYPASSWD, settings.certificatePassword.value) }
        }
    }

    /// The body of a request whose bytes are its own (`RequestBody.bytes`): copied here, where libcurl reads it
    /// while the request is in flight; grown when a body is larger, reused by the slot's later requests.
    private var ownBody = UnsafeMutableRawBufferPointer(start: nil, count: 0)

    deinit {
        curl_easy_cleanup(easy)
        ownBody.deallocate()
    }

    /// `now`: the scheduler's clock when it started the request (`DriverRequest.now`), so that wire times and
    /// deadlines are read on one clock, the scheduler's (`TransportClock`).
    func prepare(id: Int, job: JobContext, url: String, headers: CurlHeaderList, body requestBody: RequestBody, now: UInt64) {
        self.id = id
        self.job = job
        self.headers = headers
        startedAt = now
        body.removeAll(keepingCapacity: true)
        status = 0
        sends = 0
        retryAfter = nil
        _ = curlx_easy_ptr(easy, CURLOPT_URL, url)
        _ = curlx_easy_ptr(easy, CURLOPT_HTTPHEADER, headers.list)
        switch requestBody {
        case .payload:
            _ = curlx_easy_ptr(easy, CURLOPT_POSTFIELDS, job.payload.baseAddress)
            _ = curlx_easy_off(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(job.job.payload.count))
        case .bytes(let bytes):
            if ownBody.count < bytes.count {
                ownBody.deallocate()
                ownBody = .allocate(byteCount: max(bytes.count, 1024), alignment: 1)
            }
            ownBody.copyBytes(from: bytes)
            _ = curlx_easy_ptr(easy, CURLOPT_POSTFIELDS, ownBody.baseAddress)
            _ = curlx_easy_off(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(bytes.count))
        }
    }

    /// The value of a `retry-after:` header line (any case, as HTTP/1.1 and h2 write it), trimmed and at most 64
    /// bytes (delay-seconds or an HTTP date are shorter); nil for any other line.
    static func retryAfter(inHeaderLine line: UnsafeBufferPointer<UInt8>) -> String? {
        let name = Array("retry-after:".utf8)
        guard line.count > name.count else { return nil }
        for index in 0..<name.count where line[index] | 0x20 != name[index] | 0x20 { return nil }
        let isSpace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 || $0 == 0x0d || $0 == 0x0a }
        var start = name.count
        var end = line.count
        while start < end && isSpace(line[start]) { start += 1 }
        while end > start && isSpace(line[end - 1]) { end -= 1 }
        guard start < end else { return nil }
        return String(decoding: UnsafeBufferPointer(rebasing: line[start..<min(end, start + 64)]), as: UTF8.self)
    }

    /// Drops the references so the job's buffers can be freed when its last request ends.
    func release() {
        id = nil
        job = nil
        headers = nil
    }
}
