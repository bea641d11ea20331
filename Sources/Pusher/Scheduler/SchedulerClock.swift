import Dispatch
import ProviderKit
import PushCore

/// The scheduler's clock, resolved once: the system clock is called directly (no witness call on the hot
/// path, which reads the uptime per request started), any other clock through its protocol.
enum SchedulerClock {
    case system
    case custom(any TransportClock)

    init(_ clock: any TransportClock) {
        self = clock is SystemTransportClock ? .system : .custom(clock)
    }

    @inline(__always)
    var uptimeNanoseconds: UInt64 {
        switch self {
        case .system: return DispatchTime.now().uptimeNanoseconds
        case .custom(let clock): return clock.uptimeNanoseconds()
        }
    }

    var wallMillis: Int64 {
        switch self {
        case .system: return WallClock.nowMillis()
        case .custom(let clock): return clock.wallMillis()
        }
    }

    var wallSeconds: Int64 {
        switch self {
        case .system: return WallClock.nowSeconds()
        case .custom(let clock): return clock.wallSeconds()
        }
    }
}
