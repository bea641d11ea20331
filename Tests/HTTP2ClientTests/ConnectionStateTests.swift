import XCTest
@testable import HTTP2Client

/// A connection's life as one state machine: each transition applies only where it makes sense, and what
/// a closing connection remembers (opened, TLS up, GOAWAY's last stream id, surplus) comes from where it was.
final class ConnectionStateTests: XCTestCase {
    private func opened() -> ConnectionState {
        var state = ConnectionState()
        state.addressesResolved()
        state.tcpConnected()
        state.tlsEstablished()
        XCTAssertTrue(state.hasLiveSession)
        XCTAssertFalse(state.isUsable, "not before the server's SETTINGS")
        XCTAssertTrue(state.settingsReceived())
        XCTAssertFalse(state.settingsReceived(), "later SETTINGS open nothing")
        return state
    }

    func testTheStepsInOrderAndOutOfOrder() {
        var state = ConnectionState()
        XCTAssertEqual(state.connectingStep, "the name lookup")
        state.tcpConnected()
        state.tlsEstablished()
        XCTAssertEqual(state.connectingStep, "the name lookup", "out of order: nothing changes")
        state.addressesResolved()
        XCTAssertEqual(state.connectingStep, "TCP connect")
        state.tcpConnected()
        XCTAssertEqual(state.connectingStep, "TLS handshake")
        state.tlsEstablished()
        XCTAssertEqual(state.connectingStep, "server SETTINGS")
        XCTAssertTrue(state.isUsableOrConnecting)
        XCTAssertTrue(state.settingsReceived())
        XCTAssertTrue(state.isUsable)
        XCTAssertTrue(state.isEstablished)
        XCTAssertNil(state.connectingStep)
    }

    func testGoawayDrainsKeepsTheLowestLastStreamIDAndTheFirstReason() {
        var state = opened()
        state.goawayReceived(lastStreamID: 99, reason: "GOAWAY first")
        state.goawayReceived(lastStreamID: 7, reason: "GOAWAY second")
        state.goawayReceived(lastStreamID: 51, reason: "GOAWAY third")
        XCTAssertFalse(state.isUsable)
        XCTAssertFalse(state.isUsableOrConnecting)
        XCTAssertTrue(state.isEstablished)
        XCTAssertEqual(state.goawayLastStreamID, 7)
        guard case .close(let reason) = state.finishDraining() else { return XCTFail("the server's GOAWAY ended it: no GOAWAY of ours") }
        XCTAssertEqual(reason, "GOAWAY first")
        XCTAssertFalse(state.beginDraining(reason: "idle", surplus: true), "already draining")
        state.fail(reason)
        state.fail("a later reason")
        guard case .closing(let closing) = state.step else { return XCTFail("\(state.step)") }
        XCTAssertEqual(closing.reason, "GOAWAY first")
        XCTAssertTrue(closing.opened)
        XCTAssertTrue(closing.tlsEstablished)
        XCTAssertEqual(closing.goawayLastStreamID, 7)
        XCTAssertFalse(closing.surplus)
        XCTAssertTrue(state.tornDown(), "TLS was up: close_notify")
        guard case .closed = state.step else { return XCTFail("\(state.step)") }
    }

    func testOurOwnDrainSendsGoawayAndASurplusCloseIsNoFailure() {
        var state = opened()
        XCTAssertTrue(state.beginDraining(reason: "idle for 1 ms", surplus: true))
        guard case .sendGoawayAndClose(let reason) = state.finishDraining() else { return XCTFail("we send the GOAWAY") }
        XCTAssertEqual(reason, "idle for 1 ms")
        state.goawayReceived(lastStreamID: 3, reason: "GOAWAY meanwhile")
        guard case .close = state.finishDraining() else { return XCTFail("the server's GOAWAY came meanwhile") }
        state.fail(reason)
        guard case .closing(let closing) = state.step else { return XCTFail("\(state.step)") }
        XCTAssertTrue(closing.surplus)
        XCTAssertEqual(closing.goawayLastStreamID, 3)
        XCTAssertEqual(closing.reason, "idle for 1 ms")
    }

    func testAFailureBeforeOpenIsNotOpenedAndClosesTLSOnlyIfItWasUp() {
        var connecting = ConnectionState()
        connecting.addressesResolved()
        connecting.fail("ConnectionError: refused")
        XCTAssertEqual(connecting.closeReason, "ConnectionError: refused")
        XCTAssertNil(connecting.connectingStep)
        XCTAssertFalse(connecting.beginDraining(reason: "x", surplus: false))
        XCTAssertFalse(connecting.tornDown())

        var awaiting = ConnectionState()
        awaiting.addressesResolved()
        awaiting.tcpConnected()
        awaiting.tlsEstablished()
        awaiting.fail("timed out")
        guard case .closing(let closing) = awaiting.step else { return XCTFail("\(awaiting.step)") }
        XCTAssertFalse(closing.opened)
        XCTAssertTrue(closing.tlsEstablished)
        XCTAssertFalse(awaiting.settingsReceived(), "a failed connection does not open")
        XCTAssertTrue(awaiting.tornDown())
    }
}
