import NIOConcurrencyHelpers

/// The faults a vendor side injects into its sends: set at start (its settings, `EmulatorConfiguration.<vendor>`,
/// and the CLI's `--<vendor>-*` flags) and changed while running (`PushEmulator.<vendor>`). A side uses those its
/// vendor has (its settings and flags say which).
public struct VendorFaults: Sendable, Equatable {
    /// Every send is answered HTTP 503, as the vendors do under flow control.
    public var flowControl = false
    /// Requests per second per app (over it: the vendor's rate code, or 503).
    public var requestsPerSecond: Int?
    /// Tokens per second per app (a vendor that counts devices: over it 503). Nil: not limited.
    public var tokensPerSecond: Int?
    /// The side's 503 answers carry `Retry-After` with this many seconds, for a vendor that sends one. Nil: none.
    public var retryAfterSeconds: Int?
    /// Every send is answered this long after it arrived (ms): a server at its capacity, or far away, that
    /// still answers everything. 0: at once. The token endpoints answer at once.
    public var latencyMillis = 0

    public init() {}
}

/// The live faults, shared by all connections, and the vendor codes a test queued for the next sends
/// ("the next 2 sends get 81000001"), deterministic where a rate is not.
final class VendorFaultInjector: Sendable {
    private struct State {
        var faults: VendorFaults
        var queued: [String] = []
    }

    private let state: NIOLockedValueBox<State>

    init(_ faults: VendorFaults) { state = NIOLockedValueBox(State(faults: faults)) }

    var faults: VendorFaults { state.withLockedValue { $0.faults } }

    func set(_ faults: VendorFaults) { state.withLockedValue { $0.faults = faults } }

    func update(_ change: (inout VendorFaults) -> Void) { state.withLockedValue { change(&$0.faults) } }

    func queue(_ code: String, count: Int) {
        guard count > 0 else { return }
        state.withLockedValue { $0.queued.append(contentsOf: repeatElement(code, count: count)) }
    }

    /// The queued code for one send that passed its checks, if any.
    func next() -> String? {
        state.withLockedValue { $0.queued.isEmpty ? nil : $0.queued.removeFirst() }
    }
}
