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
    /// When the request was handed to libcurl (uptime nanoseconds); its deadline starts later, when it is written.
    var startedAt: UInt64 = 0
    /// When libcurl first read the request's body to write it (0: not yet): past the wait for a connection and for a
    /// stream, which HTTP/2 (nghttp2) keeps inside the client until the server's stream limit lets the request go.
    /// The request's deadline counts from here, so a request that waited for a stream is never timed out (and sent
    /// again) while the server never saw it.
    var writtenAt: UInt64 = 0
    /// The body libcurl reads through the read callback, and how far it has read.
    private var outgoing = UnsafeRawBufferPointer(start: nil, count: 0)
    private var outgoingOffset = 0
    private let uptime: () -> UInt64
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
        let clock = SchedulerClock(settings.clock)
        uptime = { clock.uptimeNanoseconds }
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
        // The body through a read callback rather than CURLOPT_POSTFIELDS: libcurl reads it only once the request can
        // be written (a connection, and under HTTP/2 a stream the server's limit allows), and the first read is
        // when the deadline starts. A seek callback lets libcurl read it again for a re-send of its own.
        _ = curlx_easy_ptr(easy, CURLOPT_READDATA, me)
        _ = curlx_easy_read_cb(easy, { buffer, size, count, context in
            let slot = Unmanaged<RequestSlot>.fromOpaque(context!).takeUnretainedValue()
            if slot.writtenAt == 0 { slot.writtenAt = max(1, slot.uptime()) }
            let room = size * count
            let left = slot.outgoing.count - slot.outgoingOffset
            let length = min(room, max(0, left))
            if length > 0, let buffer, let base = slot.outgoing.baseAddress {
                UnsafeMutableRawPointer(buffer).copyMemory(from: base + slot.outgoingOffset, byteCount: length)
                slot.outgoingOffset += length
            }
            return length
        })
        _ = curlx_easy_ptr(easy, CURLOPT_SEEKDATA, me)
        _ = curlx_easy_seek_cb(easy, { context, offset, origin in
            let slot = Unmanaged<RequestSlot>.fromOpaque(context!).takeUnretainedValue()
            guard origin == SEEK_SET, offset >= 0, offset <= curl_off_t(slot.outgoing.count) else { return 2 }  // CURL_SEEKFUNC_CANTSEEK
            slot.outgoingOffset = Int(offset)
            return 0  // CURL_SEEKFUNC_OK
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
                        // A 1xx (100 Continue, 103 Early Hints) is not the answer: the final status follows.
                        if code >= 200 { slot.status = code }
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
        writtenAt = 0
        outgoingOffset = 0
        body.removeAll(keepingCapacity: true)
        status = 0
        sends = 0
        retryAfter = nil
        _ = curlx_easy_ptr(easy, CURLOPT_URL, url)
        _ = curlx_easy_ptr(easy, CURLOPT_HTTPHEADER, headers.list)
        switch requestBody {
        case .payload:
            outgoing = UnsafeRawBufferPointer(start: job.payload.baseAddress, count: job.job.payload.count)
        case .bytes(let bytes):
            if ownBody.count < bytes.count {
                ownBody.deallocate()
                ownBody = .allocate(byteCount: max(bytes.count, 1024), alignment: 1)
            }
            ownBody.copyBytes(from: bytes)
            outgoing = UnsafeRawBufferPointer(start: ownBody.baseAddress, count: bytes.count)
        }
        // The size is known: no chunked encoding over HTTP/1.1.
        _ = curlx_easy_off(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(outgoing.count))
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
        outgoing = UnsafeRawBufferPointer(start: nil, count: 0)
        id = nil
        job = nil
        headers = nil
    }
}
