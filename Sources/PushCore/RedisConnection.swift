import CHiredis
import Foundation

/// One hiredis connection, driven from a thread of its own. Every call hops onto that thread, so
/// blocking socket I/O never runs on Swift's cooperative pool. A broken connection is dropped and made
/// again on the next call; retry pacing (backoff) is the caller's business.
public final class RedisConnection: @unchecked Sendable {
    // `context` is read and written only on `thread`; that confinement is what makes the class Sendable.
    private var context: UnsafeMutablePointer<redisContext>?
    private let thread: DedicatedThread
    public let url: RedisURL
    /// Socket timeout for every call; blocking commands must ask Redis to wait less than this.
    public let socketTimeout: Duration

    public init(url: RedisURL, name: String, socketTimeout: Duration = .seconds(5)) {
        self.url = url
        self.socketTimeout = socketTimeout
        self.thread = DedicatedThread(name: "redis-\(name)")
    }

    deinit {
        if let context { redisFree(context) }
    }

    /// Runs one command; a Redis error reply is thrown as `RedisError.server`.
    @discardableResult
    public func execute(_ arguments: [String]) async throws -> RedisReply {
        try await execute(bytes: arguments.map { Array($0.utf8) })
    }

    @discardableResult
    public func execute(bytes arguments: [[UInt8]]) async throws -> RedisReply {
        let reply = try await pipeline([arguments])[0]
        if case .error(let text) = reply { throw RedisError.server(text) }
        return reply
    }

    /// Sends all commands in one write and reads all replies: one round trip however many commands.
    /// Error replies are returned in place, not thrown, so MULTI/EXEC callers can inspect them.
    public func pipeline(_ commands: [[[UInt8]]]) async throws -> [RedisReply] {
        try await thread.run { [self] in try self.pipelineOnThread(commands) }
    }

    /// Closes the socket and ends the thread.
    public func close() async {
        _ = try? await thread.run { [self] in
            if let context { redisFree(context) }
            context = nil
        }
        thread.stop()
    }

    // MARK: on the connection's thread

    private func pipelineOnThread(_ commands: [[[UInt8]]]) throws -> [RedisReply] {
        let context = try connectedContext()
        for command in commands {
            let status = withArgv(command) { argc, argv, lengths in
                redisAppendCommandArgv(context, argc, argv, lengths)
            }
            if status != REDIS_OK { throw dropConnection(context) }
        }
        var replies: [RedisReply] = []
        replies.reserveCapacity(commands.count)
        for _ in commands {
            var raw: UnsafeMutableRawPointer?
            if redisGetReply(context, &raw) != REDIS_OK || raw == nil { throw dropConnection(context) }
            let reply = raw!.assumingMemoryBound(to: redisReply.self)
            replies.append(Self.convert(reply))
            freeReplyObject(raw)
        }
        return replies
    }

    private func connectedContext() throws -> UnsafeMutablePointer<redisContext> {
        if let context { return context }
        let seconds = socketTimeout.components.seconds
        let micros = socketTimeout.components.attoseconds / 1_000_000_000_000
        let timeout = timeval(tv_sec: Int(seconds), tv_usec: Int(micros))
        guard let fresh = redisConnectWithTimeout(url.host, Int32(url.port), timeout) else {
            throw RedisError.connection("cannot allocate a hiredis context")
        }
        if fresh.pointee.err != 0 {
            let message = Self.errorText(fresh)
            redisFree(fresh)
            throw RedisError.connection("\(url.host):\(url.port): \(message)")
        }
        redisSetTimeout(fresh, timeout)
        context = fresh
        do {
            if let password = url.password {
                var auth = ["AUTH"]
                if let user = url.username { auth.append(user) }
                auth.append(password.value)
                try expectOK(auth, on: fresh)
            }
            if url.database != 0 { try expectOK(["SELECT", String(url.database)], on: fresh) }
        } catch {
            redisFree(fresh)
            context = nil
            throw error
        }
        return fresh
    }

    private func expectOK(_ command: [String], on context: UnsafeMutablePointer<redisContext>) throws {
        let raw = withArgv(command.map { Array($0.utf8) }) { argc, argv, lengths in
            redisCommandArgv(context, argc, argv, lengths)
        }
        guard let raw else { throw RedisError.connection(Self.errorText(context)) }
        let reply = Self.convert(raw.assumingMemoryBound(to: redisReply.self))
        freeReplyObject(raw)
        if case .error(let text) = reply { throw RedisError.server("\(command[0]): \(text)") }
    }

    private func dropConnection(_ broken: UnsafeMutablePointer<redisContext>) -> RedisError {
        let message = Self.errorText(broken)
        redisFree(broken)
        context = nil
        return .connection(message)
    }

    private static func errorText(_ context: UnsafeMutablePointer<redisContext>) -> String {
        withUnsafeBytes(of: context.pointee.errstr) { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            let end = bytes.firstIndex(of: 0) ?? bytes.count
            let text = String(decoding: bytes[..<end], as: UTF8.self)
            return text.isEmpty ? "connection lost" : text
        }
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

    /// Lays the arguments out in one buffer and hands hiredis the argv/argvlen arrays it wants.
    private func withArgv<R>(
        _ arguments: [[UInt8]],
        _ body: (Int32, UnsafeMutablePointer<UnsafePointer<CChar>?>, UnsafePointer<Int>) -> R
    ) -> R {
        var flat: [UInt8] = []
        flat.reserveCapacity(arguments.reduce(1) { $0 + $1.count })
        var offsets: [Int] = []
        var lengths: [Int] = []
        for argument in arguments {
            offsets.append(flat.count)
            lengths.append(argument.count)
            flat.append(contentsOf: argument)
        }
        flat.append(0)
        return flat.withUnsafeBufferPointer { base in
            base.baseAddress!.withMemoryRebound(to: CChar.self, capacity: flat.count) { chars in
                var argv: [UnsafePointer<CChar>?] = offsets.map { chars + $0 }
                return argv.withUnsafeMutableBufferPointer { argvBuffer in
                    lengths.withUnsafeBufferPointer { lengthBuffer in
                        body(Int32(arguments.count), argvBuffer.baseAddress!, lengthBuffer.baseAddress!)
                    }
                }
            }
        }
    }
}
