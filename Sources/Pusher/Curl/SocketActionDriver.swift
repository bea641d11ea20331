import CCurl
import Dispatch
import Glibc

/// Drives a libcurl multi handle with `curl_multi_socket_action` and epoll instead of `curl_multi_perform`
/// and `curl_multi_poll`: libcurl then touches only the sockets that have something to do, and the kernel
/// keeps the watch list between waits instead of taking it anew on every poll. Confined to the transport
/// thread, except `wake`, which any thread may call.
final class SocketActionDriver {
    private let multi: UnsafeMutableRawPointer
    private let epoll: Int32
    private let wakeFD: Int32
    private var registered = Set<Int32>()
    /// When libcurl wants `CURL_SOCKET_TIMEOUT` handled (uptime nanoseconds), nil when it wants nothing.
    private var timerDue: UInt64?
    private var readyFDs = [Int32](repeating: 0, count: 64)
    private var readyFlags = [Int32](repeating: 0, count: 64)

    init(multi: UnsafeMutableRawPointer) {
        self.multi = multi
        epoll = curlx_epoll_create()
        wakeFD = curlx_eventfd()
        _ = curlx_epoll_set(epoll, wakeFD, CURL_POLL_IN, 0)
        let me = Unmanaged.passUnretained(self).toOpaque()
        _ = curlx_multi_ptr(multi, CURLMOPT_SOCKETDATA, me)
        _ = curlx_multi_ptr(multi, CURLMOPT_TIMERDATA, me)
        _ = curlx_multi_socket_cb(multi) { _, socket, what, context, _ in
            guard let context else { return 0 }
            Unmanaged<SocketActionDriver>.fromOpaque(context).takeUnretainedValue().watch(socket, what)
            return 0
        }
        _ = curlx_multi_timer_cb(multi) { _, milliseconds, context in
            guard let context else { return 0 }
            let driver = Unmanaged<SocketActionDriver>.fromOpaque(context).takeUnretainedValue()
            driver.timerDue = milliseconds < 0 ? nil : DispatchTime.now().uptimeNanoseconds &+ UInt64(milliseconds) &* 1_000_000
            return 0
        }
    }

    deinit {
        close(epoll)
        close(wakeFD)
    }

    private func watch(_ socket: Int32, _ what: Int32) {
        let known = registered.contains(socket)
        // libcurl may reuse a socket number our set still lists (or not): if epoll disagrees with the set
        // (EEXIST on add, ENOENT on modify), try the other way, so no socket goes unwatched.
        if curlx_epoll_set(epoll, socket, what, known ? 1 : 0) != 0 && what != CURL_POLL_REMOVE {
            _ = curlx_epoll_set(epoll, socket, what, known ? 0 : 1)
        }
        if what == CURL_POLL_REMOVE { registered.remove(socket) } else { registered.insert(socket) }
    }

    /// Ends a wait early (new work, finish, abort): safe from any thread.
    func wake() { curlx_eventfd_signal(wakeFD) }

    /// Lets libcurl act on its timer if due; call after adding handles (libcurl asks for an immediate timeout).
    func runDueTimer() {
        guard let due = timerDue, due <= DispatchTime.now().uptimeNanoseconds else { return }
        timerDue = nil
        var running: Int32 = 0
        curl_multi_socket_action(multi, CURL_SOCKET_TIMEOUT, 0, &running)
    }

    /// Waits at most `timeoutMillis` (less if libcurl's timer is due sooner) and lets libcurl act on every
    /// socket that became ready, and on its timer.
    func wait(timeoutMillis: Int32) {
        var timeout = timeoutMillis
        if let due = timerDue {
            let now = DispatchTime.now().uptimeNanoseconds
            timeout = due <= now ? 0 : Int32(min(UInt64(timeout), (due - now + 999_999) / 1_000_000))
        }
        let count = readyFDs.withUnsafeMutableBufferPointer { fds in
            readyFlags.withUnsafeMutableBufferPointer { flags in curlx_epoll_wait(epoll, fds.baseAddress, flags.baseAddress, timeout) }
        }
        var running: Int32 = 0
        for index in 0..<max(0, Int(count)) {
            let socket = readyFDs[index]
            if socket == wakeFD {
                curlx_eventfd_drain(wakeFD)
            } else {
                curl_multi_socket_action(multi, socket, readyFlags[index], &running)
            }
        }
        runDueTimer()
    }
}
