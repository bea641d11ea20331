import CNghttp2
import Glibc

// nghttp2's callbacks, @convention(c): the Connection comes back through user_data (unretained; the client
// keeps it alive while its session exists). They only record state and queue events: teardown happens
// outside, in the client, never inside a callback. Every callback returns 0: an error from on_stream_close
// after a GOAWAY leaks memory in 1.52 (CVE-2023-35945), and an error anywhere else would kill the session.

/// Runs `body` with the callback's Connection, borrowed: taking it as a value retained and released it in every
/// callback, several per request (retain and release together were 14% of the transport thread, in perf).
@inline(__always)
private func withConnection(_ userData: UnsafeMutableRawPointer?, _ body: (Connection) -> Void) -> Int32 {
    Unmanaged<Connection>.fromOpaque(userData!)._withUnsafeGuaranteedRef(body)
    return 0
}

/// The set of callbacks shared by all sessions of a client (nghttp2 copies it into each session).
func makeSessionCallbacks() -> OpaquePointer? {
    var callbacks: OpaquePointer?
    guard nghttp2_session_callbacks_new(&callbacks) == 0, let callbacks else { return nil }
    nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, onFrameRecv)
    nghttp2_session_callbacks_set_on_header_callback(callbacks, onHeader)
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, onDataChunkRecv)
    nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, onStreamClose)
    nghttp2_session_callbacks_set_on_frame_send_callback(callbacks, onFrameSend)
    nghttp2_session_callbacks_set_on_frame_not_send_callback(callbacks, onFrameNotSend)
    return callbacks
}

private let onHeader: nghttp2_on_header_callback = { _, frame, name, nameLength, value, valueLength, _, userData in
    guard let frame, let name, let value, h2x_frame_type(frame) == UInt8(NGHTTP2_HEADERS.rawValue) else { return 0 }
    let streamID = h2x_frame_stream_id(frame)
    if nameLength == 11, memcmp(name, "retry-after", 11) == 0 {
        // A server's earliest time for a retry (`retry-after`): seconds or an HTTP date, kept short.
        let text = String(decoding: UnsafeBufferPointer(start: value, count: min(valueLength, 64)), as: UTF8.self)
        return withConnection(userData) { $0.withStream(streamID) { $0.retryAfter = text } }
    }
    guard nameLength == 7, memcmp(name, ":status", 7) == 0 else { return 0 }
    // Three digits at most: a longer value is no status (and could not overflow the sum below).
    var status = 0
    for i in 0..<min(valueLength, 3) {
        let digit = Int(value[i]) - 48
        guard digit >= 0 && digit <= 9 else { status = 0; break }
        status = status * 10 + digit
    }
    if valueLength > 3 { status = 0 }
    // A 1xx is informational; the final :status overwrites it.
    return withConnection(userData) { $0.withStream(streamID) { $0.status = status } }
}

private let onDataChunkRecv: nghttp2_on_data_chunk_recv_callback = { _, _, streamID, data, length, userData in
    guard let data else { return 0 }
    return withConnection(userData) { conn in
        let limit = conn.client.endpoint.responseBodyLimit
        conn.withStream(streamID) { $0.appendBody(data, length, limit: limit) }
    }
}

extension StreamEntry {
    /// Keeps the first `limit` bytes (`HTTP2Endpoint.responseBodyLimit`): anything longer is not worth the memory.
    func appendBody(_ data: UnsafePointer<UInt8>, _ length: Int, limit: Int) {
        let take = min(length, limit - responseBody.count)
        if take > 0 { responseBody.append(contentsOf: UnsafeBufferPointer(start: data, count: take)) }
    }
}

private let onFrameRecv: nghttp2_on_frame_recv_callback = { session, frame, userData in
    guard let frame, let session else { return 0 }
    return withConnection(userData) { conn in frameReceived(frame, session: session, conn: conn) }
}

private func frameReceived(_ frame: UnsafePointer<nghttp2_frame>, session: OpaquePointer, conn: Connection) {
    let type = UInt32(h2x_frame_type(frame))
    let flags = UInt32(h2x_frame_flags(frame))
    switch type {
    case NGHTTP2_SETTINGS.rawValue:
        guard flags & NGHTTP2_FLAG_ACK.rawValue == 0 else { break }
        // Re-read on every SETTINGS: the server may lower or raise its limit at any time.
        let limit = nghttp2_session_get_remote_settings(session, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS)
        conn.remoteMaxStreams = Int(min(UInt64(limit), UInt64(max(conn.client.endpoint.maxStreamsPerConnection, 1))))
        conn.client.settingsReceived(conn)
    case NGHTTP2_HEADERS.rawValue, NGHTTP2_DATA.rawValue:
        if flags & NGHTTP2_FLAG_END_STREAM.rawValue != 0 {
            conn.client.responseComplete(conn, streamID: h2x_frame_stream_id(frame))
        }
    case NGHTTP2_GOAWAY.rawValue:
        let length = h2x_goaway_opaque_data_len(frame)
        let debug = length > 0 && h2x_goaway_opaque_data(frame) != nil
            ? String(decoding: UnsafeBufferPointer(start: h2x_goaway_opaque_data(frame), count: min(length, 4096)), as: UTF8.self)
            : ""
        conn.client.goawayReceived(conn, lastStreamID: h2x_goaway_last_stream_id(frame),
                                   errorCode: h2x_goaway_error_code(frame), debugData: debug)
    case NGHTTP2_PING.rawValue:
        if flags & NGHTTP2_FLAG_ACK.rawValue != 0 { conn.pingSentAt = 0 }
    default:
        break
    }
}

private let onFrameSend: nghttp2_on_frame_send_callback = { _, frame, userData in
    guard let frame, h2x_frame_type(frame) == UInt8(NGHTTP2_HEADERS.rawValue),
          h2x_headers_category(frame) == Int32(NGHTTP2_HCAT_REQUEST.rawValue) else { return 0 }
    let streamID = h2x_frame_stream_id(frame)
    return withConnection(userData) { conn in conn.withStream(streamID) { $0.markHeadersSent(at: conn.client.flushTime) } }
}

private let onFrameNotSend: nghttp2_on_frame_not_send_callback = { _, frame, libError, userData in
    guard let frame, h2x_frame_type(frame) == UInt8(NGHTTP2_HEADERS.rawValue) else { return 0 }
    // A request whose HEADERS never left (GOAWAY arrived first, or cancelled before sending): not processed.
    return withConnection(userData) { conn in
        conn.client.streamEnded(conn, streamID: h2x_frame_stream_id(frame), errorCode: nil,
                                notSentReason: String(cString: nghttp2_strerror(libError)))
    }
}

private let onStreamClose: nghttp2_on_stream_close_callback = { _, streamID, errorCode, userData in
    // Never an error here (CVE-2023-35945).
    withConnection(userData) { conn in conn.client.streamEnded(conn, streamID: streamID, errorCode: errorCode, notSentReason: nil) }
}

/// The body of a request, copied from the stream's shared body bytes at the stream's offset.
let bodyReadCallback: nghttp2_data_source_read_callback = { _, streamID, buffer, length, dataFlags, _, userData in
    guard let buffer, let dataFlags else { return ssize_t(NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue) }
    var read: (count: Int, finished: Bool)?
    _ = withConnection(userData) { $0.withStream(streamID) { read = $0.readBody(into: buffer, length: length) } }
    guard let read else {
        return ssize_t(NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue)  // resets just this stream
    }
    if read.finished { dataFlags.pointee |= NGHTTP2_DATA_FLAG_EOF.rawValue }
    return read.count
}

extension StreamEntry {
    /// Marks the entry answered; true if this final answer is its first (a status of 200 or more, not answered
    /// before).
    func markAnswered() -> Bool {
        guard !answered, status >= 200 else { return false }
        answered = true
        return true
    }

    func markHeadersSent(at time: UInt64) {
        headersSent = true
        headersSentAt = time
        headers = nil  // packed into the frame: nghttp2 no longer points at the block
    }

    /// Copies the next piece of the body (at most `length` bytes) and moves on; nil if there is no body.
    func readBody(into buffer: UnsafeMutablePointer<UInt8>, length: Int) -> (count: Int, finished: Bool)? {
        guard !body.isEmpty else { return nil }
        let offset = bodyOffset
        let count = body.withUnsafeBufferPointer { bytes -> Int in
            let n = min(length, bytes.count - offset)
            if n > 0 { buffer.update(from: bytes.baseAddress! + offset, count: n) }
            return max(n, 0)
        }
        bodyOffset = offset + count
        return (count, bodyOffset >= body.count)
    }
}
