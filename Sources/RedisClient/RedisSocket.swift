import COpenSSL
import PushCore
import Foundation
import TLSClient

/// A blocking TCP connection to Redis, plain or TLS (`rediss://`), used only from a connection's own
/// thread. hiredis 0.14 (Debian 12) has no TLS, so the socket and TLS are ours and hiredis only formats
/// commands and parses replies. Every pointer stays in this file.
final class RedisSocket {
    private var fd: Int32 = -1
    private var tls: OpaquePointer?  // SSL*
    private var context: TLSClientContext?
    let peer: String

    /// Connects within `timeout`, giving up early once `interrupted` says so (checked every 50 ms); every
    /// later read and write waits at most `timeout` too.
    init(host: String, port: Int, tls useTLS: Bool, caFile: String, timeout: Duration,
         interrupted: () -> Bool = { false }) throws {
        peer = "\(host):\(port)"
        fd = try Self.connect(host: host, port: port, timeout: timeout, interrupted: interrupted)
        var interval = Self.timeval(timeout)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &interval, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &interval, socklen_t(MemoryLayout<timeval>.size))
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        if useTLS {
            do { try startTLS(host: host, caFile: caFile) } catch {
                close()
                throw error
            }
        }
    }

    deinit { close() }

    /// The descriptor, for `shutDown(descriptor:)` from another thread.
    var descriptor: Int32 { fd }

    /// Wakes a read or write blocked on this socket in another thread (it then fails); the descriptor stays
    /// open until its owner closes it.
    static func shutDown(descriptor: Int32) {
        _ = Glibc.shutdown(descriptor, Int32(SHUT_RDWR))
    }

    func close() {
        if let tls {
            SSL_shutdown(tls)
            SSL_free(tls)
        }
        tls = nil
        context = nil
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }

    func write(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written: Int = bytes.withUnsafeBytes { raw in
                let chunk = raw.baseAddress! + offset
                let length = raw.count - offset
                if let tls { return Int(SSL_write(tls, chunk, Int32(clamping: length))) }
                return Glibc.send(fd, chunk, length, Int32(MSG_NOSIGNAL))
            }
            if written <= 0 {
                if tls == nil, written < 0, errno == EINTR { continue }
                throw RedisError.connection("\(peer): write failed (\(lastError(written)))")
            }
            offset += written
        }
    }

    /// Reads what is available (blocking until something is, or the timeout).
    func read(into buffer: inout [UInt8]) throws -> Int {
        while true {
            let count: Int = buffer.withUnsafeMutableBytes { raw in
                if let tls { return Int(SSL_read(tls, raw.baseAddress, Int32(clamping: raw.count))) }
                return Glibc.recv(fd, raw.baseAddress, raw.count, 0)
            }
            if count > 0 { return count }
            if count == 0 && tls == nil { throw RedisError.connection("\(peer): connection closed by the server") }
            if tls == nil, errno == EINTR { continue }
            if tls == nil, errno == EAGAIN || errno == EWOULDBLOCK { throw RedisError.connection("\(peer): timed out") }
            throw RedisError.connection("\(peer): read failed (\(lastError(count)))")
        }
    }

    private func lastError(_ result: Int) -> String {
        if let tls {
            let code = SSL_get_error(tls, Int32(clamping: result))
            if code == SSL_ERROR_ZERO_RETURN { return "connection closed by the server" }
            if code == SSL_ERROR_SYSCALL && (errno == EAGAIN || errno == EWOULDBLOCK) { return "timed out" }
            return Self.openSSLError() ?? "TLS error \(code)"
        }
        return String(cString: strerror(errno))
    }

    // MARK: connecting

    private static func connect(host: String, port: Int, timeout: Duration, interrupted: () -> Bool) throws -> Int32 {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_family = AF_UNSPEC
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            throw RedisError.connection("\(host):\(port): cannot resolve (\(String(cString: gai_strerror(status))))")
        }
        defer { freeaddrinfo(list) }
        var lastError = "no address"
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let address = entry {
            entry = address.pointee.ai_next
            let fd = socket(address.pointee.ai_family, address.pointee.ai_socktype, address.pointee.ai_protocol)
            if fd < 0 { lastError = String(cString: strerror(errno)); continue }
            let flags = fcntl(fd, F_GETFL)
            _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
            var result = Glibc.connect(fd, address.pointee.ai_addr, address.pointee.ai_addrlen)
            if result < 0 && errno == EINPROGRESS {
                var poller = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                var left = Int(clamping: timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
                var ready = false
                // In slices, so that an interrupt (shutdown) ends a connect to a silent host early.
                while left > 0 && !ready && !interrupted() {
                    let slice = min(left, 50)
                    ready = poll(&poller, 1, Int32(slice)) == 1
                    left -= slice
                }
                if ready {
                    var error: Int32 = 0
                    var length = socklen_t(MemoryLayout<Int32>.size)
                    getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length)
                    if error == 0 { result = 0 } else { errno = error }
                } else {
                    errno = ETIMEDOUT
                }
            }
            if result == 0 {
                _ = fcntl(fd, F_SETFL, flags)
                return fd
            }
            lastError = String(cString: strerror(errno))
            Glibc.close(fd)
        }
        throw RedisError.connection("\(host):\(port): \(lastError)")
    }

    /// The TLS client setup shared with the HTTP/2 sockets (`TLSClientContext`): the same certificate checks.
    private func startTLS(host: String, caFile: String) throws {
        let context: TLSClientContext
        do {
            context = try TLSClientContext(caFile: caFile)
        } catch {
            throw RedisError.connection("\(peer): TLS: \(error.what)\(caFile.isEmpty ? "" : " (redis.ca_file)"): \(error.detail)")
        }
        self.context = context
        guard let tls = context.makeSession(fd: fd, host: host) else { throw tlsFailure("cannot create a TLS session") }
        self.tls = tls
        guard SSL_connect(tls) == 1 else {
            if let problem = TLSClientContext.certificateProblem(tls) {
                throw tlsFailure("certificate not trusted (\(problem))")
            }
            throw tlsFailure("handshake failed")
        }
    }

    private func tlsFailure(_ what: String) -> RedisError {
        let detail = Self.openSSLError()
        return .connection("\(peer): TLS: \(what)\(detail.map { ": \($0)" } ?? "")")
    }

    /// OpenSSL's error queue, drained (nil when empty).
    private static func openSSLError() -> String? {
        let text = TLSClientContext.errorQueue()
        return text == "no OpenSSL error" ? nil : text
    }

    private static func timeval(_ duration: Duration) -> Glibc.timeval {
        Glibc.timeval(tv_sec: Int(duration.components.seconds),
                      tv_usec: Int(duration.components.attoseconds / 1_000_000_000_000))
    }
}
