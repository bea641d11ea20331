import CNghttp2
import COpenSSL
import Glibc

/// What the client remembers of one stream: nghttp2_session_del frees its streams without callbacks, so this
/// table, not nghttp2, decides what a dead connection's requests become (refused or lost).
/// A class: the callbacks update it in place through a plain lookup. As a struct, every update went through the
/// dictionary's `_modify` accessor, whose coroutine frame (holding an optional entry) was too large for the
/// caller's buffer and was allocated on the heap: three to four mallocs per request.
/// Its fields are touched only from the client's thread, one access at a time: no runtime exclusivity check
/// (see HTTP2Client's per-request state).
final class StreamEntry {
    let requestID: UInt64
    /// The request's header block, until its HEADERS frame has been sent: nghttp2 reads the block's bytes in
    /// place (NO_COPY) when it packs the frame, which may come after the job that made the block is gone.
    @exclusivity(unchecked) var headers: HTTP2HeaderBlock?
    /// The request body (a shared array: no copy per request); empty for none.
    @exclusivity(unchecked) var body: [UInt8]
    @exclusivity(unchecked) var bodyOffset = 0
    /// Set in on_frame_send: from then on the server may have processed the request.
    @exclusivity(unchecked) var headersSent = false
    @exclusivity(unchecked) var headersSentAt: UInt64 = 0
    @exclusivity(unchecked) var status = 0
    @exclusivity(unchecked) var responseBody: [UInt8] = []
    /// The answer's `retry-after` header, if it had one.
    @exclusivity(unchecked) var retryAfter: String?
    /// `.response` already emitted (END_STREAM seen); the close that follows emits nothing.
    @exclusivity(unchecked) var answered = false
    /// Cancelled by the caller: it still holds a stream slot until nghttp2 closes it, but emits nothing.
    @exclusivity(unchecked) var cancelled = false

    init(requestID: UInt64, headers: HTTP2HeaderBlock, body: [UInt8]) {
        self.requestID = requestID
        self.headers = headers
        self.body = body
    }
}

/// One TCP + TLS + HTTP/2 connection, driven by the client's event loop. Not thread-safe: the client's thread only.
final class Connection {
    let id: Int
    /// The client owns its connections and tears them down before it goes away.
    unowned(unsafe) let client: HTTP2Client
    /// Its life: resolving, connecting, TLS, open, draining, closing, closed (`ConnectionState`).
    var state = ConnectionState()
    var fd: Int32 = -1
    var ssl: OpaquePointer?      // SSL*
    var session: OpaquePointer?  // nghttp2_session*
    /// epoll interest currently registered (EPOLLIN / EPOLLOUT bits).
    var registered: UInt32 = 0

    /// Remote MAX_CONCURRENT_STREAMS, capped by maxStreamsPerConnection; 0 until the server's SETTINGS.
    var remoteMaxStreams = 0
    var answered2xx = false
    /// Some request got an answer here (any status): the server works. A connection that ends without one
    /// counts as a failed attempt, unless it was closed as surplus. Read for every answer: no runtime
    /// exclusivity check (see HTTP2Client's per-request state).
    @exclusivity(unchecked) var answeredAny = false
    /// The error code of the server's GOAWAY, if one came: NO_ERROR is a graceful rotation, anything else distress.
    var goawayErrorCode: UInt32?
    // Per-request state: no runtime exclusivity check (see HTTP2Client's).
    @exclusivity(unchecked) var inFlight = 0
    /// The entries of the streams in flight, their owner. nghttp2 also holds each entry's address as its stream's
    /// user data, which the callbacks use to find it (`withStream`).
    @exclusivity(unchecked) var streams: [Int32: StreamEntry] = [:]

    /// Calls `body` with a stream's entry, found through nghttp2's stream user data and borrowed: each request
    /// has four callbacks that need its entry, and a dictionary lookup each (hashing, then a retain and a
    /// release of the entry) was about 2% of the transport thread. The address is valid while the stream is
    /// in `streams`: set at submit, and removed from nghttp2 when the entry leaves `streams` before the stream
    /// closes (`forgetStreamUserData`).
    @inline(__always)
    func withStream(_ id: Int32, _ body: (StreamEntry) -> Void) {
        guard let session, let address = nghttp2_session_get_stream_user_data(session, id) else { return }
        Unmanaged<StreamEntry>.fromOpaque(address)._withUnsafeGuaranteedRef(body)
    }

    /// The entry of a stream, retained (for the rare caller that keeps it past a callback).
    func stream(_ id: Int32) -> StreamEntry? { streams[id] }

    /// The entry of a stream leaves `streams` while nghttp2 still has the stream (its HEADERS were never sent):
    /// nghttp2 must not hand out its address any more.
    func forgetStreamUserData(_ id: Int32) {
        guard let session else { return }
        _ = nghttp2_session_set_stream_user_data(session, id, nil)
    }

    let createdAt: UInt64
    var lastReceivedAt: UInt64
    var pingSentAt: UInt64 = 0  // 0: no PING outstanding
    var idleSince: UInt64
    /// SSL_read stopped at its per-iteration cap with bytes still buffered inside OpenSSL: read again
    /// without waiting for epoll (the kernel does not know about those bytes).
    var readPending = false
    /// SSL_read returned WANT_WRITE: retry the read when the socket is writable.
    var readWantsWrite = false

    // Output of the iteration: nghttp2_session_mem_send's frames, then SSL_write in 16 KB records.
    private var out: UnsafeMutablePointer<UInt8>
    private var outCapacity = 64 * 1024
    private var outStart = 0
    private var outEnd = 0
    var hasBufferedOutput: Bool { outEnd > outStart }
    var blockedOnWrite = false

    private var addresses: [HTTP2ResolvedAddress] = []
    private var addressIndex = 0
    private var lastConnectError = ""

    init(id: Int, client: HTTP2Client, now: UInt64) {
        self.id = id
        self.client = client
        createdAt = now
        lastReceivedAt = now
        idleSince = now
        out = .allocate(capacity: outCapacity)
    }

    deinit {
        out.deallocate()
    }

    var isUsable: Bool { state.isUsable }

    /// Streams the caller may start here now: the server's limit (or firstStreamLimit until the first 2xx)
    /// minus what is in flight, never negative when the server lowers its limit below what is open.
    var freeStreams: Int {
        guard isUsable else { return 0 }
        if answered2xx { return max(remoteMaxStreams - inFlight, 0) }
        return max(min(remoteMaxStreams, client.endpoint.firstStreamLimit) - inFlight, 0)
    }

    /// Torn down at the end of this iteration (error, timeout, finished); the first reason stays.
    func fail(_ reason: String) { state.fail(reason) }

    // MARK: TCP

    /// Resolves the host name off the client's thread (`HostLookups`); `addressesResolved` follows, from a later
    /// poll. Resolved per connection (not cached): Apple asks for fresh DNS on every (re)connect.
    func startConnect() {
        client.lookups.start(client.endpoint)
    }

    /// The lookup has finished: connect to its addresses in order.
    func addressesResolved(_ result: Result<[HTTP2ResolvedAddress], HTTP2ClientError>) {
        guard case .resolving = state.step else { return }
        switch result {
        case .failure(let error):
            fail("ConnectionError: cannot resolve \(client.endpoint.host): \(error)")
        case .success(let list):
            addresses = list
            state.addressesResolved()
            tryNextAddress()
        }
    }

    private func tryNextAddress() {
        let endpoint = client.endpoint
        while addressIndex < addresses.count {
            var target = addresses[addressIndex]
            addressIndex += 1
            let socketFD = socket(target.family, Int32(SOCK_STREAM.rawValue | SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue), 0)
            if socketFD < 0 {
                lastConnectError = String(cString: strerror(errno))
                continue
            }
            // Small frames must leave now, not after Nagle's 40 ms.
            var one: Int32 = 1
            _ = setsockopt(socketFD, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            let rc = withUnsafePointer(to: &target.address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(socketFD, $0, target.length) }
            }
            if rc == 0 || errno == EINPROGRESS {
                fd = socketFD
                registered = EPOLLOUT.rawValue
                guard client.loop.add(fd: fd, events: registered, token: UInt64(id)) else {
                    fail("ConnectionError: epoll_ctl: \(String(cString: strerror(errno)))")
                    return
                }
                return  // completion (or failure) is reported as writable
            }
            lastConnectError = String(cString: strerror(errno))
            Glibc.close(socketFD)
        }
        fail("ConnectionError: cannot connect to \(endpoint.host):\(endpoint.port): \(lastConnectError.isEmpty ? "no address" : lastConnectError)")
    }

    /// The nonblocking connect finished: check it, then start TLS (or try the next address).
    func connectCompleted() {
        var error: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        _ = getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length)
        if error != 0 {
            lastConnectError = String(cString: strerror(error))
            client.loop.remove(fd: fd)
            Glibc.close(fd)
            fd = -1
            tryNextAddress()
            return
        }
        guard let ssl = client.tls.makeSession(fd: fd, host: client.endpoint.host) else {
            fail("ConnectionError: SSL_new: \(TLSContext.errorQueue())")
            return
        }
        self.ssl = ssl
        state.tcpConnected()
        driveHandshake()
    }

    // MARK: TLS

    func driveHandshake() {
        guard let ssl else { return }
        let rc = SSL_connect(ssl)
        if rc == 1 {
            handshakeDone()
            return
        }
        switch SSL_get_error(ssl, rc) {
        case SSL_ERROR_WANT_READ:
            setInterest(EPOLLIN.rawValue)
        case SSL_ERROR_WANT_WRITE:
            setInterest(EPOLLIN.rawValue | EPOLLOUT.rawValue)
        default:
            let verify = SSL_get_verify_result(ssl)
            if verify != X509_V_OK {
                _ = TLSContext.errorQueue()
                fail("ConnectionError: TLS certificate verification failed: \(String(cString: X509_verify_cert_error_string(verify)))")
            } else {
                let system = errno != 0 ? " (\(String(cString: strerror(errno))))" : ""
                fail("ConnectionError: TLS handshake failed: \(TLSContext.errorQueue())\(system)")
            }
        }
    }

    private func handshakeDone() {
        guard let ssl else { return }
        var selected: UnsafePointer<UInt8>?
        var length: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &selected, &length)
        guard let selected, length == 2, selected[0] == UInt8(ascii: "h"), selected[1] == UInt8(ascii: "2") else {
            let name = selected.map { String(decoding: UnsafeBufferPointer(start: $0, count: Int(length)), as: UTF8.self) }
            fail("ConnectionError: \(HTTP2Client.alpnRefusal) (selected: \(name ?? "none"))")
            return
        }
        var newSession: OpaquePointer?
        let userData = Unmanaged.passUnretained(self).toOpaque()
        guard nghttp2_session_client_new2(&newSession, client.callbacks, userData, client.sessionOption) == 0, let newSession else {
            fail("ConnectionError: nghttp2_session_client_new2 failed")
            return
        }
        session = newSession
        // No server push; everything else stays at the defaults (responses are small).
        var settings = [nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_ENABLE_PUSH.rawValue), value: 0)]
        _ = nghttp2_submit_settings(newSession, UInt8(NGHTTP2_FLAG_NONE.rawValue), &settings, settings.count)
        state.tlsEstablished()
        setInterest(EPOLLIN.rawValue)
        // With read-ahead, SSL_connect may have taken the server's first records (its SETTINGS) off the socket
        // with the handshake: they sit inside OpenSSL, and epoll would never report them. Read them now.
        readPending = true
    }

    func setInterest(_ events: UInt32) {
        guard fd >= 0, events != registered else { return }
        registered = events
        client.loop.modify(fd: fd, events: events, token: UInt64(id))
    }

    // MARK: Reading

    /// SSL_read in 64 KB pieces into nghttp2 until OpenSSL needs the socket again (WANT_READ); read-ahead makes
    /// each read() take as much as the kernel has. Capped per iteration so one busy connection cannot starve others.
    func readAvailable(now: UInt64) {
        guard let ssl, let session, state.closeReason == nil else { return }
        readPending = false
        readWantsWrite = false
        let buffer = client.readBuffer
        let capacity = client.readBufferSize
        var reads = 0
        while true {
            let n = SSL_read(ssl, buffer, Int32(capacity))
            if n > 0 {
                lastReceivedAt = now
                let consumed = nghttp2_session_mem_recv(session, buffer, Int(n))
                if consumed < 0 {
                    fail("HTTP/2 error: \(String(cString: nghttp2_strerror(Int32(consumed))))")
                    return
                }
                reads += 1
                if reads >= 64 {
                    // Bytes already inside OpenSSL do not wake epoll: remember to come back without waiting.
                    readPending = SSL_has_pending(ssl) != 0
                    return
                }
                continue
            }
            let error = SSL_get_error(ssl, n)
            switch error {
            case SSL_ERROR_WANT_READ:
                // SSL_has_pending may still be 1 here for a partial record; its rest is on the wire, and
                // level-triggered epoll reports the socket when it arrives.
                return
            case SSL_ERROR_WANT_WRITE:
                readWantsWrite = true
                setInterest(EPOLLIN.rawValue | EPOLLOUT.rawValue)
                return
            case SSL_ERROR_ZERO_RETURN:
                fail(state.goawayLastStreamID != nil ? "closed by the server after GOAWAY" : "closed by the server (TLS close_notify)")
                return
            default:
                let system = errno != 0 && error == SSL_ERROR_SYSCALL ? String(cString: strerror(errno)) : ""
                let queue = TLSContext.errorQueue()
                if error == SSL_ERROR_SYSCALL && system.isEmpty {
                    fail(state.goawayLastStreamID != nil ? "closed by the server after GOAWAY" : "connection closed by the server (EOF)")
                } else {
                    fail("read failed: \(system.isEmpty ? queue : system)")
                }
                return
            }
        }
    }

    // MARK: Writing

    /// Moves everything nghttp2 has queued into this connection's buffer and writes it with as few SSL_write
    /// calls as possible (one per 16 KB TLS record). On WANT_WRITE the bytes stay and EPOLLOUT is registered.
    func flush() {
        guard let ssl, let session, state.closeReason == nil else { return }
        if !blockedOnWrite || outEnd - outStart < 1 << 20 {
            while true {
                var data: UnsafePointer<UInt8>?
                let n = nghttp2_session_mem_send(session, &data)
                if n < 0 {
                    fail("HTTP/2 error: \(String(cString: nghttp2_strerror(Int32(n))))")
                    return
                }
                guard n > 0, let data else { break }
                append(data, Int(n))
                // A stalled peer must not make us buffer everything nghttp2 holds; the rest waits in nghttp2.
                if outEnd - outStart >= 1 << 20 { break }
            }
        }
        while outStart < outEnd {
            ERR_clear_error()
            let chunk = min(outEnd - outStart, 16 * 1024)
            let n = SSL_write(ssl, out + outStart, Int32(chunk))
            if n > 0 {
                outStart += Int(n)
                continue
            }
            let error = SSL_get_error(ssl, n)
            if error == SSL_ERROR_WANT_WRITE || error == SSL_ERROR_WANT_READ {
                blockedOnWrite = true
                setInterest(EPOLLIN.rawValue | EPOLLOUT.rawValue)
                return
            }
            let system = error == SSL_ERROR_SYSCALL && errno != 0 ? String(cString: strerror(errno)) : TLSContext.errorQueue()
            fail("write failed: \(system)")
            return
        }
        outStart = 0
        outEnd = 0
        blockedOnWrite = false
        if !readWantsWrite { setInterest(EPOLLIN.rawValue) }  // no-op unless EPOLLOUT was registered
    }

    /// Whether this connection has output to write in this iteration (so poll must not block).
    var wantsFlush: Bool {
        guard let session, state.hasLiveSession else { return false }
        if blockedOnWrite { return false }  // waiting for EPOLLOUT
        return hasBufferedOutput || nghttp2_session_want_write(session) != 0
    }

    private func append(_ data: UnsafePointer<UInt8>, _ count: Int) {
        if outEnd + count > outCapacity {
            let live = outEnd - outStart
            if live + count <= outCapacity {
                // Compact; ACCEPT_MOVING_WRITE_BUFFER allows a pending SSL_write's bytes to move.
                memmove(out, out + outStart, live)
            } else {
                var newCapacity = outCapacity * 2
                while newCapacity < live + count { newCapacity *= 2 }
                let bigger = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
                bigger.update(from: out + outStart, count: live)
                out.deallocate()
                out = bigger
                outCapacity = newCapacity
            }
            outStart = 0
            outEnd = live
        }
        (out + outEnd).update(from: data, count: count)
        outEnd += count
    }

    // MARK: Teardown

    /// Frees TLS and nghttp2 state and closes the socket. nghttp2_session_del runs no callbacks: the caller
    /// turns `streams` into events itself. Never called from inside an nghttp2 callback.
    func teardown() {
        let hadTLS = state.tornDown()
        if let session {
            nghttp2_session_del(session)
            self.session = nil
        }
        if let ssl {
            if hadTLS {
                _ = SSL_shutdown(ssl)  // one nonblocking attempt at close_notify; the peer may be gone
            }
            SSL_free(ssl)
            self.ssl = nil
            ERR_clear_error()
        }
        if fd >= 0 {
            client.loop.remove(fd: fd)
            Glibc.close(fd)
            fd = -1
        }
    }
}
