#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A write to a socket whose peer has reset it raises SIGPIPE, whose default action ends the process. Apple's
/// push service resets connections, Redis restarts: neither may kill the worker or a tool. `SSL_write` on a descriptor
/// (`SSL_set_fd`) writes with write(2), which cannot pass MSG_NOSIGNAL, so the signal itself is disarmed.
public enum BrokenPipes {
    /// Ignores SIGPIPE for the whole process: every write to a reset socket then fails with EPIPE, which the
    /// caller turns into a connection error. Called first thing by every executable of the package.
    public static func ignoreInProcess() {
        _ = signal(SIGPIPE, SIG_IGN)
    }

    /// Blocks SIGPIPE on the calling thread: the same protection for a thread of ours that writes sockets
    /// when the library runs inside a process that did not ignore the signal (tests, embedders). A blocked
    /// SIGPIPE raised by a write stays pending on this thread and is never delivered; the write fails with EPIPE.
    public static func blockOnThisThread() {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGPIPE)
        _ = pthread_sigmask(SIG_BLOCK, &set, nil)
    }
}
