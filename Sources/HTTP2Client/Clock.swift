import Glibc

/// CLOCK_MONOTONIC in nanoseconds (vDSO, no syscall): all timers and `headersSentAtNanos` use it.
@inline(__always)
func monotonicNanos() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
}

@inline(__always)
func millisToNanos(_ millis: Int) -> UInt64 { UInt64(max(millis, 0)) &* 1_000_000 }
