import CHiredis
import PushCore
import Foundation

/// One Redis connection, driven from a thread of its own. Every call hops onto that thread, so
/// blocking socket I/O never runs on Swift's cooperative pool. The socket (plain or TLS) is
/// `RedisSocket`; commands go out in RESP (`RESPEncoder`) and hiredis parses the replies. A broken
/// connection is dropped and made again on the next call; retry pacing (backoff) is the caller's business.
public final class RedisConnection: RedisCommands, @unchecked Sendable {
    // `socket` and `reader` are used only on `thread`; that confinement is what makes the class Sendable.
    private var socket: RedisSocket?
    private var reader: UnsafeMutablePointer<redisReader>?
    private var readBuffer = [UInt8](repeating: 0, count: 64 * 1024)
    /// A connection made after this one had been connected before is a reconnect (counted in the metrics).
    private var everConnected = false
    private let thread: DedicatedThread
    public let url: RedisURL
    /// CA file for `rediss://` (`redis.ca_file`); empty: the system's CAs.
    public let caFile: String
    /// Socket timeout for every call; blocking commands must ask Redis to wait less than this.
    public let socketTimeout: Duration
    /// The open socket's descriptor (-1: none) and how many times `interrupt()` was called, shared with
    /// other threads: `interrupt()` shuts the socket down under this lock, and the connection's thread
    /// clears the descriptor under it before closing, so a descriptor is never shut down after reuse.
    private let live = Locked<(descriptor: Int32, interrupts: Int)>((-1, 0))

    public init(url: RedisURL, name: String, caFile: String = "", socketTimeout: Duration = .seconds(5)) {
        self.url = url
        self.caFile = caFile
        self.socketTimeout = socketTimeout
        self.thread = DedicatedThread(name: "redis-\(name)")
    }

    deinit {
        if let reader { redisReaderFree(reader) }
    }

    /// Sends all commands in one write and reads all replies: one round trip however many commands.
    /// Error replies are returned in place, not thrown, so MULTI/EXEC callers can inspect them.
    public func pipeline(_ commands: [[[UInt8]]]) async throws -> [RedisReply] {
        // An interrupt ends this call even if it is still waiting behind another on the thread.
        let interrupts = live.withLock { $0.interrupts }
        return try await thread.run { [self] in try self.pipelineOnThread(commands, interrupts: interrupts) }
    }

    /// The BLMOVE of the list onto itself with its reply skipped (`CLIENT REPLY SKIP`), then LLEN: the
    /// element BLMOVE saw never crosses the network, so an oversized element LPUSHed onto an idle queue (which
    /// the claim script then dead-letters inside Redis) never enters this process. One reply comes back, LLEN's,
    /// once BLMOVE returned (Redis runs a client's commands in order).
    public func waitForListElement(_ key: String, timeoutSeconds: Double) async throws -> Bool {
        let reply = try await lengthAfterWaiting(key, timeoutSeconds: timeoutSeconds)
        if case .error(let text) = reply { throw RedisError.server(text) }
        return (reply.integer ?? 0) > 0
    }

    /// The wait of `waitForListElement`, answering LLEN's reply as it came (an error reply included: a Redis
    /// Cluster node's MOVED, which `SlotConnection` follows).
    func lengthAfterWaiting(_ key: String, timeoutSeconds: Double) async throws -> RedisReply {
        let commands = [["CLIENT", "REPLY", "SKIP"], ["BLMOVE", key, key, "RIGHT", "RIGHT", String(timeoutSeconds)], ["LLEN", key]]
            .map { $0.map { Array($0.utf8) } }
        let interrupts = live.withLock { $0.interrupts }
        return try await thread.run { [self] in try self.pipelineOnThread(commands, interrupts: interrupts, replies: 1) }[0]
    }

    public func interrupt() {
        live.withLock { state in
            state.interrupts += 1
            if state.descriptor >= 0 { RedisSocket.shutDown(descriptor: state.descriptor) }
        }
    }

    /// Closes the socket and ends the thread.
    public func close() async {
        _ = try? await thread.run { [self] in self.drop() }
        thread.stop()
    }

    // MARK: on the connection's thread

    /// `replies`: how many replies the commands give (fewer than commands after `CLIENT REPLY SKIP`).
    private func pipelineOnThread(_ commands: [[[UInt8]]], interrupts: Int, replies: Int? = nil) throws -> [RedisReply] {
        if live.withLock({ $0.interrupts != interrupts }) { throw RedisError.connection("\(url.host):\(url.port): interrupted") }
        let socket = try connected(interrupts: interrupts)
        do {
            try socket.write(RESPEncoder.encode(commands))
            return try readReplies(replies ?? commands.count, from: socket)
        } catch {
            drop()
            throw error
        }
    }

    private func readReplies(_ count: Int, from socket: RedisSocket) throws -> [RedisReply] {
        guard let reader else { throw RedisError.connection("no reply reader") }
        var replies: [RedisReply] = []
        replies.reserveCapacity(count)
        while replies.count < count {
            var raw: UnsafeMutableRawPointer?
            guard redisReaderGetReply(reader, &raw) == REDIS_OK else {
                throw RedisError.connection("\(socket.peer): protocol error in a reply")
            }
            if let raw {
                replies.append(Self.convert(raw.assumingMemoryBound(to: redisReply.self)))
                freeReplyObject(raw)
                continue
            }
            let received = try socket.read(into: &readBuffer)
            let fed = readBuffer.withUnsafeBytes { bytes in
                redisReaderFeed(reader, bytes.baseAddress!.assumingMemoryBound(to: CChar.self), received)
            }
            guard fed == REDIS_OK else { throw RedisError.connection("\(socket.peer): cannot buffer a reply") }
        }
        return replies
    }

    private func connected(interrupts: Int) throws -> RedisSocket {
        if let socket { return socket }
        let fresh = try RedisSocket(host: url.host, port: url.port, tls: url.tls, caFile: caFile, timeout: socketTimeout) { [live] in
            live.withLock { $0.interrupts != interrupts }
        }
        let registered = live.withLock { state -> Bool in
            guard state.interrupts == interrupts else { return false }
            state.descriptor = fresh.descriptor
            return true
        }
        guard registered else {
            fresh.close()
            throw RedisError.connection("\(fresh.peer): interrupted")
        }
        reader = redisReaderCreate()
        socket = fresh
        do {
            if let password = url.password {
                var auth = ["AUTH"]
                if let user = url.username { auth.append(user) }
                auth.append(password.value)
                // The reply names the command, never the arguments: the password stays out of errors.
                try expectOK(auth, on: fresh, name: "AUTH")
            }
            if url.database != 0 { try expectOK(["SELECT", String(url.database)], on: fresh, name: "SELECT") }
        } catch {
            drop()
            throw error
        }
        if everConnected { PushMetrics.shared.redisReconnects.increment() }
        everConnected = true
        return fresh
    }

    private func expectOK(_ command: [String], on socket: RedisSocket, name: String) throws {
        try socket.write(RESPEncoder.encode([command.map { Array($0.utf8) }]))
        let reply = try readReplies(1, from: socket)[0]
        if case .error(let text) = reply { throw RedisError.server("\(name): \(text)") }
    }

    private func drop() {
        live.withLock { $0.descriptor = -1 }
        socket?.close()
        socket = nil
        if let reader { redisReaderFree(reader) }
        reader = nil
    }

    private static func convert(_ reply: UnsafeMutablePointer<redisReply>) -> RedisReply {
        let r = reply.pointee
        switch Int32(r.type) {
        case REDIS_REPLY_STRING:
            return .bulk(bytes(r.str, r.len))
        case REDIS_REPLY_STATUS:
            return .status(String(decoding: bytes(r.str, r.len), as: UTF8.self))
        case REDIS_REPLY_ERROR:
            return .error(String(decoding: bytes(r.str, r.len), as: UTF8.self))
        case REDIS_REPLY_INTEGER:
            return .integer(Int64(r.integer))
        case REDIS_REPLY_ARRAY:
            var items: [RedisReply] = []
            items.reserveCapacity(Int(r.elements))
            for index in 0..<Int(r.elements) {
                if let element = r.element[index] { items.append(convert(element)) }
            }
            return .array(items)
        default:
            return .null
        }
    }

    private static func bytes(_ pointer: UnsafeMutablePointer<CChar>?, _ length: Int) -> [UInt8] {
        guard let pointer, length > 0 else { return [] }
        return pointer.withMemoryRebound(to: UInt8.self, capacity: length) {
            Array(UnsafeBufferPointer(start: $0, count: length))
        }
    }
}
