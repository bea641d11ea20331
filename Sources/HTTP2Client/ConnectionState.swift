/// The life of one connection, as one value: which step it is at and what that step knows, instead of a phase
/// plus flags (draining, GOAWAY received, its last stream id, why it drains, why it closes, closed as surplus)
/// that had to be kept consistent by hand. The transitions are the only way to change it; each says what the
/// caller must do, and a transition that does not apply to the current state changes nothing.
///
///     resolving -> connecting -> tlsHandshake -> awaitingSettings -> open -> draining
///          \____________\______________\______________\______________\________\____-> closing -> closed
///
/// `closing`: failed or finished, torn down at the end of the event loop's iteration (its streams become
/// refused or lost then); `closed`: torn down.
struct ConnectionState {
    enum Step {
        /// Waiting for the host name's addresses (looked up on a thread of its own).
        case resolving
        /// A nonblocking TCP connect is under way (to one address after another).
        case connecting
        case tlsHandshake
        /// TLS is up and our SETTINGS are queued; the server's first SETTINGS make it open.
        case awaitingSettings
        /// New streams may start here.
        case open
        /// No new streams (GOAWAY received, or we close it); closed once its last stream has ended.
        case draining(Draining)
        case closing(Closing)
        case closed
    }

    struct Draining {
        /// Why it closes once its streams have ended: the GOAWAY, or our own reason.
        var reason: String
        /// The lowest last_stream_id of the server's GOAWAYs; nil when the server sent none. Streams above it
        /// were not processed.
        var goawayLastStreamID: Int32?
        /// We close it as an idle surplus connection, not because anything failed.
        var surplus: Bool
    }

    struct Closing {
        var reason: String
        /// It had reached open (the server's SETTINGS came).
        var opened: Bool
        /// A TLS session is up: teardown sends close_notify.
        var tlsEstablished: Bool
        var goawayLastStreamID: Int32?
        var surplus: Bool
    }

    private(set) var step = Step.resolving

    // MARK: Transitions

    mutating func addressesResolved() {
        guard case .resolving = step else { return }
        step = .connecting
    }

    mutating func tcpConnected() {
        guard case .connecting = step else { return }
        step = .tlsHandshake
    }

    mutating func tlsEstablished() {
        guard case .tlsHandshake = step else { return }
        step = .awaitingSettings
    }

    /// The server's SETTINGS: true when they opened the connection (the first ones), false for later ones.
    mutating func settingsReceived() -> Bool {
        guard case .awaitingSettings = step else { return false }
        step = .open
        return true
    }

    /// A GOAWAY: no new streams, and those above the lowest last_stream_id were not processed. The first reason
    /// to drain stays. (nghttp2 takes nothing but SETTINGS before the server's first SETTINGS, so a GOAWAY
    /// comes open or later.)
    mutating func goawayReceived(lastStreamID: Int32, reason: String) {
        switch step {
        case .awaitingSettings, .open:
            step = .draining(Draining(reason: reason, goawayLastStreamID: lastStreamID, surplus: false))
        case .draining(var draining):
            draining.goawayLastStreamID = min(draining.goawayLastStreamID ?? .max, lastStreamID)
            step = .draining(draining)
        case .closing(var closing):
            closing.goawayLastStreamID = min(closing.goawayLastStreamID ?? .max, lastStreamID)
            step = .closing(closing)
        case .resolving, .connecting, .tlsHandshake, .closed:
            break
        }
    }

    /// We stop starting streams here: true if it was open (it drains now), false if it drains or ends already.
    mutating func beginDraining(reason: String, surplus: Bool) -> Bool {
        guard case .open = step else { return false }
        step = .draining(Draining(reason: reason, goawayLastStreamID: nil, surplus: surplus))
        return true
    }

    enum FinishDraining {
        /// Send GOAWAY(NO_ERROR) (the server sent none), flush, then `fail(reason)`.
        case sendGoawayAndClose(reason: String)
        /// Flush, then `fail(reason)`: the server's GOAWAY already ended things.
        case close(reason: String)
        case nothing
    }

    /// A draining connection's last stream has ended: what closes it.
    func finishDraining() -> FinishDraining {
        guard case .draining(let draining) = step else { return .nothing }
        return draining.goawayLastStreamID == nil ? .sendGoawayAndClose(reason: draining.reason) : .close(reason: draining.reason)
    }

    /// Failed or finished: torn down at the end of this iteration. The first reason stays.
    mutating func fail(_ reason: String) {
        switch step {
        case .resolving, .connecting, .tlsHandshake:
            step = .closing(Closing(reason: reason, opened: false, tlsEstablished: false, goawayLastStreamID: nil, surplus: false))
        case .awaitingSettings:
            step = .closing(Closing(reason: reason, opened: false, tlsEstablished: true, goawayLastStreamID: nil, surplus: false))
        case .open:
            step = .closing(Closing(reason: reason, opened: true, tlsEstablished: true, goawayLastStreamID: nil, surplus: false))
        case .draining(let draining):
            step = .closing(Closing(reason: reason, opened: true, tlsEstablished: true,
                                    goawayLastStreamID: draining.goawayLastStreamID, surplus: draining.surplus))
        case .closing, .closed:
            break
        }
    }

    /// Torn down: whether a TLS session was up (worth a close_notify).
    mutating func tornDown() -> Bool {
        let hadTLS = switch step {
        case .awaitingSettings, .open, .draining: true
        case .closing(let closing): closing.tlsEstablished
        case .resolving, .connecting, .tlsHandshake, .closed: false
        }
        step = .closed
        return hadTLS
    }

    // MARK: Questions

    /// New streams may start here.
    var isUsable: Bool { if case .open = step { true } else { false } }

    /// Usable now or once it has connected: neither draining nor ending.
    var isUsableOrConnecting: Bool {
        switch step {
        case .resolving, .connecting, .tlsHandshake, .awaitingSettings, .open: true
        case .draining, .closing, .closed: false
        }
    }

    /// Open or draining: the server's SETTINGS came and it has not failed.
    var isEstablished: Bool {
        switch step {
        case .open, .draining: true
        default: false
        }
    }

    /// It has an HTTP/2 session that reads and writes (TLS up, not failed).
    var hasLiveSession: Bool {
        switch step {
        case .awaitingSettings, .open, .draining: true
        default: false
        }
    }

    var isDraining: Bool { if case .draining = step { true } else { false } }

    /// Why it is to be torn down, once it is.
    var closeReason: String? { if case .closing(let closing) = step { closing.reason } else { nil } }

    /// The lowest last_stream_id of the server's GOAWAYs, if it sent any.
    var goawayLastStreamID: Int32? {
        switch step {
        case .draining(let draining): draining.goawayLastStreamID
        case .closing(let closing): closing.goawayLastStreamID
        default: nil
        }
    }

    /// What a connection that is still connecting waits for (for the timeout's message); nil once established.
    var connectingStep: String? {
        switch step {
        case .resolving: "the name lookup"
        case .connecting: "TCP connect"
        case .tlsHandshake: "TLS handshake"
        case .awaitingSettings: "server SETTINGS"
        default: nil
        }
    }
}
