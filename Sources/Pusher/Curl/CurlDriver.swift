import CCurl
import Dispatch
import Logging
import ProviderKit
import PushCore

/// A provider's `transport: libcurl` (or a module that always uses libcurl): one libcurl multi handle, HTTP/2 with
/// multiplexing over a small pool of connections, easy handles reused. libcurl hides the servers' SETTINGS, so the
/// scheduler bounds and adapts how many requests it holds (`ConcurrencyLimiter`), and requests beyond the servers'
/// stream limits wait inside libcurl. Confined to the transport thread, except `wake`.
final class CurlDriver: TransportDriver {
    private let multi: UnsafeMutableRawPointer
    private let settings: TransportSettings
    private let connections: ConnectionCounter
    /// Set when `settings.socketAction`: libcurl driven by socket_action and epoll instead of perform and poll.
    private let socketDriver: SocketActionDriver?
    /// `wake` may come from any thread, also after `close` freed the multi handle: it checks under this lock.
    private let closed = Locked(false)
    private var idle: [RequestSlot] = []
    /// Slots by request id while in flight.
    private var busy: [Int: RequestSlot] = [:]
    /// Requests libcurl refused to take (curl_multi_add_handle failed): reported by the next `process`.
    private var rejected: [DriverCompletion] = []
    private var headerCache = HeaderCache<CurlHeaderList>()
    private let service: any PushService
    /// The HTTP version the last answer came over (`CURL_HTTP_VERSION_*`), reported when it changes:
    /// `push_http_protocol{provider, app, protocol}` is 1 for the one in use.
    private var lastProtocol = -1

    /// The service says each request's body: the job's payload (a service that sends it as is), which libcurl reads
    /// in place (`JobContext.payload`), or bytes of the request's own, which its slot keeps while libcurl reads them.
    init(settings: TransportSettings, service: any PushService, logger: Logger?) {
        self.service = service
        CurlGlobal.initialize()
        self.settings = settings
        connections = ConnectionCounter(app: settings.app, metrics: service.metrics, service: service.name, logger: logger)
        multi = curl_multi_init()
        socketDriver = settings.socketAction ? SocketActionDriver(multi: multi) : nil
        _ = curlx_multi_long(multi, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX))
        _ = curlx_multi_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, settings.connections)
        _ = curlx_multi_long(multi, CURLMOPT_MAX_CONCURRENT_STREAMS, 1000)
    }

    var openConnections: Int { connections.open.load(ordering: .relaxed) }
    var streamsLimit: Int? { nil }

    func room(limit: Int) -> Int { max(0, limit) }

    func noteWaitingWork(_ waiting: Bool) {}

    func start(_ request: DriverRequest) {
        let slot = idle.popLast() ?? RequestSlot(settings: settings, connections: connections)
        let service = self.service
        let headers = headerCache.block(for: request.job, generation: request.generation, epoch: request.headerEpoch, bearer: request.bearer) {
            CurlHeaderList(service.headerFields(for: $0, bearer: $1))
        }
        let path = service.path(for: request.job, tokens: request.tokens)
        slot.prepare(id: request.id, job: request.job, url: "\(settings.baseURL)\(path.fixed)\(path.suffix)", headers: headers,
                     body: service.body(for: request.job, tokens: request.tokens), now: request.now)
        let code = curl_multi_add_handle(multi, slot.easy)
        guard code == CURLM_OK else {
            slot.release()
            idle.append(slot)
            let reason = "TransportError: curl_multi_add_handle: \(String(cString: curl_multi_strerror(code)))"
            rejected.append(DriverCompletion(id: request.id, result: .failed(reason: reason, sent: false)))
            return
        }
        busy[request.id] = slot
    }

    func cancel(id: Int) {
        guard let slot = busy.removeValue(forKey: id) else { return }
        curl_multi_remove_handle(multi, slot.easy)
        slot.release()
        idle.append(slot)
    }

    /// From when libcurl first read the request's body to write it (`RequestSlot.writtenAt`): the waits for a
    /// connection and, under HTTP/2, for a stream the server's limit allows (inside nghttp2, past PRETRANSFER)
    /// both come before it.
    func onWireSince(id: Int) -> UInt64? {
        guard let slot = busy[id], slot.writtenAt > 0 else { return nil }
        return slot.writtenAt
    }

    func process(into completions: inout [DriverCompletion]) {
        if !rejected.isEmpty {
            completions += rejected
            rejected.removeAll(keepingCapacity: true)
        }
        var running: Int32 = 0
        if let socketDriver { socketDriver.runDueTimer() } else { curl_multi_perform(multi, &running) }
        var remaining: Int32 = 0
        while let message = curl_multi_info_read(multi, &remaining) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
            let code = message.pointee.data.result
            let slot = Unmanaged<RequestSlot>.fromOpaque(curlx_private(easy)!).takeUnretainedValue()
            curl_multi_remove_handle(multi, easy)
            guard let id = slot.id else { continue }
            busy[id] = nil
            // RFC 9113 section 8.1: a server may answer before the request's END_STREAM and then reset the
            // stream with NO_ERROR; clients must not discard that response. libcurl reports it as a stream
            // error, so a status received by this transfer is honoured in that case.
            let answered = slot.status > 0 && (code == CURLE_OK || code == CURLE_HTTP2_STREAM)
            let result: DriverCompletion.Result
            if answered {
                let version = curlx_info_long(easy, CURLINFO_HTTP_VERSION)
                if version != lastProtocol { noteProtocol(version) }
                let wire = curlx_info_off(easy, CURLINFO_TOTAL_TIME_T) - curlx_info_off(easy, CURLINFO_PRETRANSFER_TIME_T)
                result = .answered(status: slot.status, body: slot.body, wireMicros: Int64(wire), retryAfter: slot.retryAfter)
            } else {
                result = .failed(reason: Self.describe(code), sent: slot.writtenAt > 0)
            }
            completions.append(DriverCompletion(id: id, result: result, resends: max(0, slot.sends - 1)))
            slot.release()
            idle.append(slot)
        }
    }

    func wait(timeoutMillis: Int32) {
        if let socketDriver {
            socketDriver.wait(timeoutMillis: timeoutMillis)
        } else {
            curl_multi_poll(multi, nil, 0, timeoutMillis, nil)
        }
    }

    func wake() {
        closed.withLock { closed in
            guard !closed else { return }
            if let socketDriver { socketDriver.wake() } else { curl_multi_wakeup(multi) }
        }
    }

    func close() -> [Int] {
        let dropped = Array(busy.keys)
        for slot in busy.values { curl_multi_remove_handle(multi, slot.easy) }
        busy.removeAll()
        closed.withLock { closed in
            closed = true
            curl_multi_cleanup(multi)
        }
        return dropped
    }

    /// The protocol ALPN gave (h2, or HTTP/1.1 where the server offers only that), in the metrics.
    private func noteProtocol(_ version: Int) {
        if lastProtocol >= 0 {
            PushMetrics.shared.httpProtocol(provider: service.metrics.provider, app: settings.app, protocol: Self.protocolName(lastProtocol), inUse: false)
        }
        lastProtocol = version
        PushMetrics.shared.httpProtocol(provider: service.metrics.provider, app: settings.app, protocol: Self.protocolName(version), inUse: true)
    }

    static func protocolName(_ version: Int) -> String {
        switch version {
        case Int(CURL_HTTP_VERSION_2_0): return "h2"
        case Int(CURL_HTTP_VERSION_1_1): return "http/1.1"
        case Int(CURL_HTTP_VERSION_1_0): return "http/1.0"
        default: return "other"
        }
    }

    static func describe(_ code: CURLcode) -> String {
        switch code {
        case CURLE_OPERATION_TIMEDOUT: return "Timeout"
        case CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_HOST: return "ConnectionError: \(String(cString: curl_easy_strerror(code)))"
        default: return "TransportError: \(String(cString: curl_easy_strerror(code)))"
        }
    }
}

/// A request header list in libcurl's form, built once per job and provider token; freed when the last
/// request that points at it has ended.
final class CurlHeaderList {
    let list: UnsafeMutablePointer<curl_slist>?

    init(_ fields: [(name: String, value: String)]) {
        var list: UnsafeMutablePointer<curl_slist>?
        for field in fields { list = curl_slist_append(list, "\(field.name): \(field.value)") }
        // libcurl would add `accept: */*`; no service needs it. Nor `Expect: 100-continue`, which it adds to an
        // HTTP/1.1 body over 1 MB: the request then waits for a 100 no vendor is known to send.
        list = curl_slist_append(list, "accept:")
        list = curl_slist_append(list, "expect:")
        self.list = list
    }

    deinit { if let list { curl_slist_free_all(list) } }
}
