import CNghttp2
import COpenSSL
import Glibc
import Logging
import PushCore

/// An HTTP/2-over-TLS client for many small POSTs to one endpoint (Apple's push service, or a provider module's),
/// driven by ONE thread: `start`, `cancel`, `poll`, `close` and every property must be used from that thread only.
/// `wake()` is the only thread-safe member, which is why the class is `@unchecked Sendable` (so another thread can
/// hold it).
///
/// Each `poll` is one event-loop iteration: epoll_wait, read and feed nghttp2, timers, then one flush per
/// connection. Requests never queue inside nghttp2: `start` accepts one only when a connection has a free
/// stream under the server's current MAX_CONCURRENT_STREAMS, so a request's deadline never runs in a hidden queue.
public final class HTTP2Client: @unchecked Sendable {
    /// How a connection's failure reads when the server's ALPN choice was not h2.
    public static let alpnRefusal = "ALPN: the server did not select h2"

    /// Whether a connection failure (`HTTP2Event.connectionClosed`'s reason) says the server chose HTTP/1.1 by ALPN
    /// (possible only with `HTTP2Endpoint.offersHTTP1`).
    public static func selectedHTTP1(_ reason: String) -> Bool {
        reason.contains(alpnRefusal) && reason.contains("selected: http/1.1")
    }

    let endpoint: HTTP2Endpoint
    let tls: TLSContext
    let loop: EventLoop
    /// Host name lookups, on a thread of their own.
    let lookups: HostLookups
    let callbacks: OpaquePointer      // nghttp2_session_callbacks*
    let sessionOption: OpaquePointer  // nghttp2_option*
    let readBuffer: UnsafeMutablePointer<UInt8>
    let readBufferSize = 64 * 1024
    /// Time of the current flush: HEADERS sent in it are stamped with it (one clock read per flush).
    var flushTime: UInt64 = 0

    private let logger: Logger
    // The per-request state below is touched only from the client's thread and never while another access to it
    // is under way (callbacks run inside nghttp2 calls that hold none), so the runtime exclusivity check is
    // dropped for it: `@exclusivity(unchecked)`. The checks cost 4% of the transport thread (perf).
    @exclusivity(unchecked) private var connections: [Connection] = []
    private var nextConnectionID = 1
    /// Request id -> where it runs, for cancel().
    @exclusivity(unchecked) private var locations = RequestLocations()
    @exclusivity(unchecked) private var pendingEvents: [HTTP2Event] = []
    private var closed = false

    // Spacing of new connections: never more than one per 250 ms; after failures, 100 ms doubling to 5 s. A
    // failure is a connection that ended without answering a single request (failed to connect, or opened and
    // then refused or went away): only an answer proves the server works and resets the count, not its SETTINGS.
    private var nextOpenAllowedAt: UInt64 = 0
    private var consecutiveFailures = 0
    /// No jitter: the spacing already keeps reconnects apart, and a client has one server to wait for.
    private static let reconnectBackoff = Backoff(baseMillis: 100, maxMillis: 5_000, lowestPercent: 100)
    private let openSpacing = millisToNanos(250)
    /// GOAWAY, close and failed-attempt lines at info and above: at most one of each kind per 5 s, the rest at debug.
    private var goawayLines = RepeatedLineLimiter(intervalMillis: 5_000)
    private var closeLines = RepeatedLineLimiter(intervalMillis: 5_000)
    private var failureLines = RepeatedLineLimiter(intervalMillis: 5_000)

    // Per-request nv array: 4 pseudo-headers then the block's entries (nghttp2 copies the array at submit; the
    // block's names and values it reads in place later, the :path value it copies).
    private var scratch: UnsafeMutablePointer<nghttp2_nv>
    private var scratchCapacity = 32
    /// The :path of the request being submitted (prefix and suffix joined).
    @exclusivity(unchecked) private var pathScratch: [UInt8] = []
    private let pseudoStorage: UnsafeMutablePointer<UInt8>

    /// Set by the caller after it started what it could: work is waiting for a stream. With no stream free then,
    /// extra connections are opened (one at a time, spaced) up to maxConnections.
    public var waitingWork = false {
        didSet { streamsRanOut = waitingWork && availableStreams == 0 }
    }
    /// Whether every stream was taken when the caller last said work waits. Read then, not when the timers run:
    /// by then the answers of the same iteration have freed streams, and under a steady flow of answers (a long
    /// round trip, thousands in flight) streams were never all taken at that moment.
    private var streamsRanOut = false

    /// `logger`: where connection events go (tests pass one of their own to count the lines).
    public init(endpoint: HTTP2Endpoint, logger: Logger = Logger(label: "HTTP2Client")) throws {
        self.endpoint = endpoint
        self.logger = logger
        tls = try TLSContext(endpoint: endpoint)
        loop = try EventLoop()
        lookups = HostLookups(loop: loop)
        guard let callbacks = makeSessionCallbacks() else { throw HTTP2ClientError("nghttp2_session_callbacks_new failed") }
        self.callbacks = callbacks
        var option: OpaquePointer?
        guard nghttp2_option_new(&option) == 0, let option else {
            nghttp2_session_callbacks_del(callbacks)
            throw HTTP2ClientError("nghttp2_option_new failed")
        }
        // Assume no more than firstStreamLimit streams before the server's SETTINGS (nghttp2 would assume 100).
        nghttp2_option_set_peer_max_concurrent_streams(option, UInt32(max(1, endpoint.firstStreamLimit)))
        sessionOption = option
        readBuffer = .allocate(capacity: readBufferSize)
        scratch = .allocate(capacity: scratchCapacity)

        // ":method" "POST" ":scheme" "https" ":authority" <host[:port]> ":path", laid out once.
        let authority = endpoint.port == 443 ? endpoint.host : "\(endpoint.host):\(endpoint.port)"
        let pieces: [[UInt8]] = [Array(":method".utf8), Array("POST".utf8), Array(":scheme".utf8), Array("https".utf8),
                                 Array(":authority".utf8), Array(authority.utf8), Array(":path".utf8)]
        pseudoStorage = .allocate(capacity: pieces.reduce(0) { $0 + $1.count })
        var offset = 0
        var pointers: [UnsafeMutablePointer<UInt8>] = []
        for piece in pieces {
            piece.withUnsafeBufferPointer { (pseudoStorage + offset).update(from: $0.baseAddress!, count: $0.count) }
            pointers.append(pseudoStorage + offset)
            offset += piece.count
        }
        // The pseudo-headers live in pseudoStorage until after the sessions are deleted, and their names are
        // lower-case already: nghttp2 need not copy (nor lower-case) them for every request.
        let fixed = UInt8(NGHTTP2_NV_FLAG_NO_COPY_NAME.rawValue | NGHTTP2_NV_FLAG_NO_COPY_VALUE.rawValue)
        scratch[0] = nghttp2_nv(name: pointers[0], value: pointers[1], namelen: 7, valuelen: 4, flags: fixed)
        scratch[1] = nghttp2_nv(name: pointers[2], value: pointers[3], namelen: 7, valuelen: 5, flags: fixed)
        scratch[2] = nghttp2_nv(name: pointers[4], value: pointers[5], namelen: 10, valuelen: pieces[5].count, flags: fixed)
        // :path carries the device token: literal, never indexed (Apple's advice; it changes every request anyway).
        // Its value is the per-request buffer, which nghttp2 copies.
        scratch[3] = nghttp2_nv(name: pointers[6], value: pointers[6], namelen: 5, valuelen: 0,
                                flags: UInt8(NGHTTP2_NV_FLAG_NO_INDEX.rawValue | NGHTTP2_NV_FLAG_NO_COPY_NAME.rawValue))
    }

    deinit {
        if !closed { _ = close() }
        nghttp2_option_del(sessionOption)
        nghttp2_session_callbacks_del(callbacks)
        readBuffer.deallocate()
        scratch.deallocate()
        pseudoStorage.deallocate()
    }

    // MARK: Public API

    /// Requests `start` would accept now: over open, usable connections, (server limit, or firstStreamLimit
    /// until that connection's first 2xx) minus streams in flight.
    public var availableStreams: Int {
        var sum = 0
        for conn in connections { sum += conn.freeStreams }
        return sum
    }

    /// Sum of the open connections' current remote MAX_CONCURRENT_STREAMS (capped by maxStreamsPerConnection).
    public var streamsLimit: Int {
        var sum = 0
        for conn in connections where conn.state.isEstablished { sum += conn.remoteMaxStreams }
        return sum
    }

    public var openConnections: Int {
        var count = 0
        for conn in connections where conn.state.isEstablished { count += 1 }
        return count
    }

    /// Streams in flight over all connections (cancelled ones included until their stream closes).
    public var inFlight: Int {
        var sum = 0
        for conn in connections { sum += conn.inFlight }
        return sum
    }

    /// Submits the request on the least-loaded connection with a free stream; false (nothing done) when no
    /// stream is free. Its frames leave in the next `poll`'s flush, together with everything else.
    public func start(_ request: HTTP2Request) -> Bool {
        start(id: request.id, path: request.path, pathSuffix: request.pathSuffix, headers: request.headers, body: request.body)
    }

    /// `start` with the request's parts as arguments, for a caller that has them at hand: no request value is
    /// built, so none of its references is retained and released again.
    public func start(id: UInt64, path: String, pathSuffix: String, headers block: HTTP2HeaderBlock, body: HTTP2Body) -> Bool {
        start(id: id, path: path, pathSuffix: pathSuffix, headers: block, payload: body.bytes)
    }

    /// `start` with the body as the caller's array, shared rather than copied: no body object per request.
    public func start(id: UInt64, path: String, pathSuffix: String, headers block: HTTP2HeaderBlock, payload: [UInt8]) -> Bool {
        // By index: iterating the connections retained and released each one, for every request.
        var best = -1
        var bestFree = 0
        for index in connections.indices {
            let free = connections[index].freeStreams
            if free > bestFree {
                best = index
                bestFree = free
            }
        }
        guard best >= 0 else { return false }
        let conn = connections[best]
        guard let session = conn.session else { return false }

        let count = 4 + block.count
        if count > scratchCapacity {
            let bigger = UnsafeMutablePointer<nghttp2_nv>.allocate(capacity: count)
            bigger.update(from: scratch, count: 4)
            scratch.deallocate()
            scratch = bigger
            scratchCapacity = count
        }
        if block.count > 0 { (scratch + 4).update(from: block.nv, count: block.count) }
        // nghttp2 copies the header values at submit, so one buffer serves every request.
        pathScratch.removeAll(keepingCapacity: true)
        pathScratch.append(contentsOf: path.utf8)
        pathScratch.append(contentsOf: pathSuffix.utf8)
        let entry = StreamEntry(requestID: id, headers: block, body: payload)
        // The entry's address is the stream's user data: the callbacks find it there (`withStream`). It stays
        // valid because `conn.streams` owns the entry for as long as nghttp2 may hand the address out.
        let address = Unmanaged.passUnretained(entry).toOpaque()
        let streamID: Int32 = pathScratch.withUnsafeBufferPointer { pathBytes in
            scratch[3].value = UnsafeMutablePointer(mutating: pathBytes.baseAddress ?? UnsafePointer(pseudoStorage))
            scratch[3].valuelen = pathBytes.count
            if payload.isEmpty {
                return nghttp2_submit_request(session, nil, scratch, count, nil, address)
            }
            // The read callback finds the body through the stream's entry, so the source pointer is unused.
            var provider = nghttp2_data_provider(source: nghttp2_data_source(ptr: nil), read_callback: bodyReadCallback)
            return nghttp2_submit_request(session, nil, scratch, count, &provider, address)
        }
        guard streamID > 0 else {
            // Out of stream IDs (or out of memory): this connection takes no more; a replacement gets opened.
            beginDraining(conn, reason: "cannot start streams: \(String(cString: nghttp2_strerror(streamID)))")
            return false
        }
        conn.streams[streamID] = entry
        conn.inFlight += 1
        locations.set(.init(connection: conn, streamID: streamID), for: id)
        // Client stream IDs are odd 31-bit numbers: about a billion per connection. Retire it well before.
        if streamID > 0x7FFF_0000 { beginDraining(conn, reason: "stream IDs exhausted") }
        return true
    }

    /// Forgets where request `id` runs, if it still runs on this stream. A stream answered before its body was
    /// all sent closes later; by then the caller may have reused the id for a new request, whose location stays.
    private func forgetLocation(of id: UInt64, conn: Connection, streamID: Int32) {
        if let location = locations[id], location.connection === conn, location.streamID == streamID {
            locations.remove(id)
        }
    }

    /// RST_STREAM(CANCEL) for a request the caller gave up on (its deadline passed); no event for it afterwards.
    /// Its stream slot is free once nghttp2 closes the stream.
    public func cancel(id: UInt64) {
        guard let location = locations.remove(id) else { return }
        let conn = location.connection
        guard let entry = conn.stream(location.streamID) else { return }
        entry.cancelled = true
        if let session = conn.session {
            _ = nghttp2_submit_rst_stream(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), location.streamID,
                                          NGHTTP2_CANCEL.rawValue)
        }
    }

    /// Thread-safe: makes a `poll` blocked in epoll_wait return.
    public func wake() {
        loop.wake()
    }

    /// One event-loop iteration; appends what happened to `events`: flush what `start` submitted since the last
    /// poll, epoll_wait (at most `timeoutMillis`, less when a timer is due), read everything readable into nghttp2,
    /// run the timers, flush each connection's output (one SSL_write per 16 KB record), tear down dead connections.
    public func poll(timeoutMillis: Int, into events: inout [HTTP2Event]) {
        guard !closed else { return }
        var now = monotonicNanos()
        // Requests started since the last poll leave before we block (else the wait would have to be 0 ms and
        // cost an extra epoll_wait per iteration); the flush at the end sends what this iteration produced.
        flushTime = now
        for conn in connections where conn.wantsFlush { conn.flush() }
        let timeout = waitTimeout(now: now, requested: timeoutMillis)
        let ready = loop.wait(timeoutMillis: timeout)
        now = monotonicNanos()
        for i in 0..<ready {
            let token = loop.tokens[i]
            if token == EventLoop.wakeToken {
                loop.drainWake()
                deliverLookup()
                continue
            }
            guard let conn = connection(token: token) else { continue }
            handle(conn, events: loop.flags[i], now: now)
        }
        for conn in connections where conn.readPending { conn.readAvailable(now: now) }
        runTimers(now: now)
        flushTime = now
        for conn in connections { conn.flush() }
        reap(now: now)
        if !pendingEvents.isEmpty {
            events.append(contentsOf: pendingEvents)
            pendingEvents.removeAll(keepingCapacity: true)
        }
    }

    /// Closes every connection at once (no GOAWAY wait) and returns the ids of requests still in flight,
    /// cancelled ones excluded. No events are produced; the client is unusable afterwards.
    public func close() -> [UInt64] {
        guard !closed else { return [] }
        closed = true
        var ids: [UInt64] = []
        for conn in connections {
            conn.teardown()
            for (_, entry) in conn.streams where !entry.cancelled && !entry.answered { ids.append(entry.requestID) }
            conn.streams.removeAll()
        }
        connections.removeAll()
        locations.removeAll()
        pendingEvents.removeAll()
        return ids
    }

    // MARK: Event handling

    private func connection(token: UInt64) -> Connection? {
        for conn in connections where UInt64(conn.id) == token { return conn }
        return nil
    }

    /// A finished lookup (its thread woke the loop) goes to every connection waiting for addresses.
    private func deliverLookup() {
        guard let result = lookups.takeResult() else { return }
        for conn in connections {
            if case .resolving = conn.state.step { conn.addressesResolved(result) }
        }
    }

    private func handle(_ conn: Connection, events: UInt32, now: UInt64) {
        switch conn.state.step {
        case .resolving:
            break  // no socket yet
        case .connecting:
            conn.connectCompleted()
        case .tlsHandshake:
            conn.driveHandshake()
        case .awaitingSettings, .open, .draining:
            if events & (EPOLLIN.rawValue | EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0 {
                conn.readAvailable(now: now)
            }
            // EPOLLOUT: the flush at the end of this iteration writes what was kept; a read that needed to
            // write (TLS key update) is retried now.
            if events & EPOLLOUT.rawValue != 0 {
                conn.blockedOnWrite = false
                if conn.readWantsWrite { conn.readAvailable(now: now) }
            }
        case .closing, .closed:
            break
        }
    }

    private func runTimers(now: UInt64) {
        let usable = usableCount()
        for conn in connections {
            switch conn.state.step {
            case .resolving, .connecting, .tlsHandshake, .awaitingSettings:
                if elapsed(since: conn.createdAt, now: now) >= millisToNanos(endpoint.connectTimeoutMillis) {
                    let step = conn.state.connectingStep ?? "server SETTINGS"
                    conn.fail("ConnectionError: timed out after \(endpoint.connectTimeoutMillis) ms waiting for \(step)")
                }
            case .open, .draining:
                if conn.pingSentAt != 0 {
                    if elapsed(since: conn.pingSentAt, now: now) >= millisToNanos(endpoint.pingTimeoutMillis) {
                        conn.fail("PING timeout: no ACK within \(endpoint.pingTimeoutMillis) ms")
                        continue
                    }
                } else if elapsed(since: conn.lastReceivedAt, now: now) >= millisToNanos(endpoint.pingIntervalMillis), let session = conn.session {
                    _ = nghttp2_submit_ping(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), nil)
                    conn.pingSentAt = now
                }
                if conn.state.isUsable && conn.inFlight == 0 && usable > endpoint.initialConnections
                    && elapsed(since: conn.idleSince, now: now) >= millisToNanos(endpoint.idleCloseMillis) {
                    beginDraining(conn, reason: "idle for \(endpoint.idleCloseMillis) ms", surplus: true)
                }
                if conn.state.isDraining && conn.inFlight == 0 { finishDraining(conn) }
            case .closing, .closed:
                break
            }
        }
        openConnectionIfNeeded(now: now)
    }

    /// Nanoseconds from `start` to `now`, 0 when `start` is later: the connections stamp their times with fresh
    /// clock readings while `now` was read at the top of the iteration, and a wrapping difference would read
    /// as centuries (closing every surplus connection as idle, PINGing every connection on every pass).
    private func elapsed(since start: UInt64, now: UInt64) -> UInt64 {
        now > start ? now - start : 0
    }

    /// Connections that are or will be usable for new streams (connecting ones included).
    private func usableCount() -> Int {
        var count = 0
        for conn in connections where conn.state.isUsableOrConnecting { count += 1 }
        return count
    }

    /// Whether another connection should be opened now: fewer usable ones than initialConnections (start, or
    /// replacing a closed / GOAWAY'd one), or work waiting with no free stream (one connect at a time).
    private func wantsNewConnection() -> Bool {
        var usable = 0
        var connecting = 0
        for conn in connections where conn.state.isUsableOrConnecting {
            usable += 1
            if !conn.state.isUsable { connecting += 1 }
        }
        if usable < endpoint.initialConnections { return true }
        return streamsRanOut && connecting == 0 && usable < endpoint.maxConnections
    }

    private func openConnectionIfNeeded(now: UInt64) {
        guard !closed, now >= nextOpenAllowedAt, wantsNewConnection() else { return }
        nextOpenAllowedAt = now &+ openSpacing
        let conn = Connection(id: nextConnectionID, client: self, now: now)
        nextConnectionID += 1
        connections.append(conn)
        conn.startConnect()
        logger.debug("HTTP/2 connection \(conn.id) to \(endpoint.host):\(endpoint.port) opening")
    }

    private func waitTimeout(now: UInt64, requested: Int) -> Int32 {
        if !pendingEvents.isEmpty { return 0 }
        var deadline = now &+ millisToNanos(requested)
        // Only surplus connections have an idle deadline; anything else would make every wait 0 ms once it passed.
        let surplus = usableCount() > endpoint.initialConnections
        for conn in connections {
            if conn.state.closeReason != nil || conn.readPending || conn.wantsFlush { return 0 }
            switch conn.state.step {
            case .resolving, .connecting, .tlsHandshake, .awaitingSettings:
                deadline = min(deadline, conn.createdAt &+ millisToNanos(endpoint.connectTimeoutMillis))
            case .open, .draining:
                deadline = min(deadline, conn.pingSentAt != 0
                    ? conn.pingSentAt &+ millisToNanos(endpoint.pingTimeoutMillis)
                    : conn.lastReceivedAt &+ millisToNanos(endpoint.pingIntervalMillis))
                if surplus && conn.inFlight == 0 && conn.state.isUsable {
                    deadline = min(deadline, conn.idleSince &+ millisToNanos(endpoint.idleCloseMillis))
                }
            case .closing, .closed:
                break
            }
        }
        if wantsNewConnection() { deadline = min(deadline, max(nextOpenAllowedAt, now)) }
        if deadline <= now { return 0 }
        // Round up so a timer is not polled for in a busy loop of 0 ms waits just before it is due.
        return Int32(min((deadline - now + 999_999) / 1_000_000, UInt64(Int32.max)))
    }

    // MARK: From the callbacks and the connection

    func settingsReceived(_ conn: Connection) {
        guard conn.state.settingsReceived() else { return }
        conn.idleSince = monotonicNanos()
        pendingEvents.append(.connectionOpened(connection: conn.id))
        logger.debug("HTTP/2 connection \(conn.id) open, MAX_CONCURRENT_STREAMS \(conn.remoteMaxStreams)")
    }

    /// END_STREAM from the server: the answer is complete, emit it now (the stream's close follows).
    func responseComplete(_ conn: Connection, streamID: Int32) {
        conn.withStream(streamID) { entry in
            if entry.markAnswered() { emitResponse(conn, entry) }
        }
    }

    private func emitResponse(_ conn: Connection, _ entry: StreamEntry) {
        if entry.status >= 200 && entry.status < 300 { conn.answered2xx = true }
        if !conn.answeredAny {
            // Its first answer: the server works, and connection attempts are no longer backed off (its
            // SETTINGS alone proved nothing). Once per connection, not per answer.
            conn.answeredAny = true
            consecutiveFailures = 0
        }
        guard !entry.cancelled else { return }
        pendingEvents.append(.response(id: entry.requestID, status: entry.status, body: entry.responseBody,
                                       headersSentAtNanos: entry.headersSentAt, retryAfter: entry.retryAfter))
    }

    /// Why a stream above a GOAWAY's last_stream_id was not processed: "above GOAWAY last_stream_id N" after a
    /// graceful GOAWAY (NO_ERROR: the server rotates its connections, as Apple's does), "above GOAWAY(ERROR) …"
    /// after one that names an error (a server in distress: the caller may take it as a sign of overload).
    private func aboveGoaway(_ conn: Connection, _ last: Int32) -> String {
        guard let code = conn.goawayErrorCode, code != NGHTTP2_NO_ERROR.rawValue else { return "above GOAWAY last_stream_id \(last)" }
        return "above GOAWAY(\(String(cString: nghttp2_http2_strerror(code)))) last_stream_id \(last)"
    }

    /// A stream's end: closed (errorCode set) or its HEADERS never sent (notSentReason set).
    func streamEnded(_ conn: Connection, streamID: Int32, errorCode: UInt32?, notSentReason: String?) {
        guard let entry = conn.streams.removeValue(forKey: streamID) else { return }
        // On stream close nghttp2 frees the stream right after this callback; a request whose HEADERS were
        // never sent keeps its stream a little longer, and its user data must not outlive the entry.
        if notSentReason != nil { conn.forgetStreamUserData(streamID) }
        conn.inFlight -= 1
        if conn.inFlight == 0 { conn.idleSince = monotonicNanos() }
        if !entry.cancelled { forgetLocation(of: entry.requestID, conn: conn, streamID: streamID) }
        if entry.answered || entry.cancelled { return }
        let id = entry.requestID
        if let notSentReason {
            pendingEvents.append(.refused(id: id, reason: "not sent: \(notSentReason)"))
            return
        }
        let code = errorCode ?? NGHTTP2_NO_ERROR.rawValue
        if code == NGHTTP2_NO_ERROR.rawValue && entry.status >= 200 {
            // Closed cleanly with an answer, e.g. RST_STREAM(NO_ERROR) after the response (RFC 9113 §8.1).
            emitResponse(conn, entry)
        } else if code == NGHTTP2_REFUSED_STREAM.rawValue {
            // Server RST_STREAM(REFUSED_STREAM), or nghttp2 closing streams above a GOAWAY's last_stream_id.
            if let last = conn.state.goawayLastStreamID, streamID > last {
                pendingEvents.append(.refused(id: id, reason: aboveGoaway(conn, last)))
            } else {
                pendingEvents.append(.refused(id: id, reason: "REFUSED_STREAM"))
            }
        } else if entry.headersSent {
            pendingEvents.append(.lost(id: id, reason: "stream closed without a complete response: \(String(cString: nghttp2_http2_strerror(code)))"))
        } else {
            pendingEvents.append(.refused(id: id, reason: "stream closed before its HEADERS were sent: \(String(cString: nghttp2_http2_strerror(code)))"))
        }
    }

    func goawayReceived(_ conn: Connection, lastStreamID: Int32, errorCode: UInt32, debugData: String) {
        if conn.goawayErrorCode == nil || errorCode != NGHTTP2_NO_ERROR.rawValue { conn.goawayErrorCode = errorCode }
        conn.state.goawayReceived(lastStreamID: lastStreamID,
                                  reason: "GOAWAY \(String(cString: nghttp2_http2_strerror(errorCode)))\(debugData.isEmpty ? "" : " \(debugData)")")
        pendingEvents.append(.goaway(connection: conn.id, lastStreamID: lastStreamID, errorCode: errorCode, debugData: debugData))
        logRepeated(.notice, &goawayLines, now: monotonicNanos(),
                    "HTTP/2 connection \(conn.id) GOAWAY last_stream_id=\(lastStreamID) error=\(errorCode) \(debugData)")
    }

    /// Logs at `level` if `limiter` lets the line through (saying how many it held back since), else at debug.
    private func logRepeated(_ level: Logger.Level, _ limiter: inout RepeatedLineLimiter, now: UInt64, _ message: String) {
        if let held = limiter.admit(now: now) {
            logger.log(level: level, "\(message)\(held > 0 ? " (and \(held) more like it since the last at this level, at debug)" : "")")
        } else {
            logger.debug("\(message)")
        }
    }

    /// No new streams here; closed (with GOAWAY) once its streams have ended. A replacement is opened by the timers.
    private func beginDraining(_ conn: Connection, reason: String, surplus: Bool = false) {
        guard conn.state.beginDraining(reason: reason, surplus: surplus) else { return }
        if conn.inFlight == 0 { finishDraining(conn) }
    }

    /// Sends GOAWAY(NO_ERROR) (unless the server's GOAWAY already ended things) and closes after the flush.
    private func finishDraining(_ conn: Connection) {
        switch conn.state.finishDraining() {
        case .nothing:
            return
        case .sendGoawayAndClose(let reason):
            if let session = conn.session { _ = nghttp2_session_terminate_session(session, NGHTTP2_NO_ERROR.rawValue) }
            conn.flush()
            conn.fail(reason)
        case .close(let reason):
            conn.flush()
            conn.fail(reason)
        }
    }

    /// Tears down connections that failed or finished in this iteration; their remaining streams become
    /// `.refused` (never sent, or above a GOAWAY's last_stream_id) or `.lost` (sent: may have been processed).
    private func reap(now: UInt64) {
        // A session that wants neither to read nor to write is over (e.g. after both sides' GOAWAY).
        for conn in connections where conn.state.isEstablished {
            if let session = conn.session, nghttp2_session_want_read(session) == 0 && nghttp2_session_want_write(session) == 0
                && !conn.hasBufferedOutput {
                if case .draining(let draining) = conn.state.step { conn.fail(draining.reason) } else { conn.fail("HTTP/2 session ended") }
            }
        }
        guard connections.contains(where: { $0.state.closeReason != nil }) else { return }
        var kept: [Connection] = []
        for conn in connections {
            guard case .closing(let closing) = conn.state.step else {
                kept.append(conn)
                continue
            }
            let reason = closing.reason
            conn.teardown()
            for (streamID, entry) in conn.streams.sorted(by: { $0.key < $1.key }) {
                if !entry.cancelled { forgetLocation(of: entry.requestID, conn: conn, streamID: streamID) }
                if entry.cancelled || entry.answered { continue }
                if !entry.headersSent {
                    pendingEvents.append(.refused(id: entry.requestID, reason: "not sent: connection closed: \(reason)"))
                } else if let last = closing.goawayLastStreamID, streamID > last {
                    pendingEvents.append(.refused(id: entry.requestID, reason: aboveGoaway(conn, last)))
                } else {
                    pendingEvents.append(.lost(id: entry.requestID, reason: "connection closed: \(reason)"))
                }
            }
            conn.streams.removeAll()
            conn.inFlight = 0
            pendingEvents.append(.connectionClosed(connection: conn.id, reason: reason))
            if conn.answeredAny || closing.surplus {
                logRepeated(.info, &closeLines, now: now, "HTTP/2 connection \(conn.id) closed: \(reason)")
            } else {
                // Failed before it was usable, or opened and ended without answering anything (a server that
                // refuses or goes away on every connection): back off 100 ms doubling to 5 s (and never faster
                // than the spacing). Its SETTINGS alone prove nothing.
                consecutiveFailures += 1
                let backoff = Self.reconnectBackoff.delayMillis(attempt: consecutiveFailures)
                nextOpenAllowedAt = max(nextOpenAllowedAt, now &+ millisToNanos(backoff))
                let what = closing.opened ? "closed before answering any request" : "failed"
                logRepeated(.warning, &failureLines, now: now,
                            "HTTP/2 connection \(conn.id) \(what): \(reason); next attempt in \(backoff) ms or later")
            }
        }
        connections = kept
    }
}
