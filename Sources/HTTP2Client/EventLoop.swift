import CNghttp2
import Glibc

/// One epoll set for all connections of a client plus an eventfd, so `wake()` from any thread ends a blocked
/// wait. Level-triggered: a connection that stops reading early is reported again by the kernel.
final class EventLoop {
    static let wakeToken: UInt64 = 0
    let epollFD: Int32
    let wakeFD: Int32
    private let maxEvents = 256
    let tokens: UnsafeMutablePointer<UInt64>
    let flags: UnsafeMutablePointer<UInt32>

    init() throws(HTTP2ClientError) {
        epollFD = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard epollFD >= 0 else { throw HTTP2ClientError("epoll_create1: \(String(cString: strerror(errno)))") }
        wakeFD = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        guard wakeFD >= 0 else {
            Glibc.close(epollFD)
            throw HTTP2ClientError("eventfd: \(String(cString: strerror(errno)))")
        }
        tokens = .allocate(capacity: maxEvents)
        flags = .allocate(capacity: maxEvents)
        _ = h2x_epoll_ctl(epollFD, EPOLL_CTL_ADD, wakeFD, EPOLLIN.rawValue, EventLoop.wakeToken)
    }

    deinit {
        Glibc.close(wakeFD)
        Glibc.close(epollFD)
        tokens.deallocate()
        flags.deallocate()
    }

    func add(fd: Int32, events: UInt32, token: UInt64) -> Bool {
        h2x_epoll_ctl(epollFD, EPOLL_CTL_ADD, fd, events, token) == 0
    }

    func modify(fd: Int32, events: UInt32, token: UInt64) {
        _ = h2x_epoll_ctl(epollFD, EPOLL_CTL_MOD, fd, events, token)
    }

    func remove(fd: Int32) {
        _ = h2x_epoll_ctl(epollFD, EPOLL_CTL_DEL, fd, 0, 0)
    }

    /// Waits up to `timeoutMillis` (0 = just look); results in `tokens[0..<n]` / `flags[0..<n]`.
    func wait(timeoutMillis: Int32) -> Int {
        let n = h2x_epoll_wait(epollFD, tokens, flags, Int32(maxEvents), timeoutMillis)
        return n < 0 ? 0 : Int(n)  // EINTR: an empty iteration
    }

    /// Thread-safe: eventfd writes are atomic; the counter saturating is harmless (one wake is enough).
    func wake() {
        var one: UInt64 = 1
        _ = Glibc.write(wakeFD, &one, 8)
    }

    func drainWake() {
        var value: UInt64 = 0
        _ = Glibc.read(wakeFD, &value, 8)
    }
}
