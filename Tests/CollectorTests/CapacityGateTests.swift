import APNsProvider
@testable import FCMProvider
@testable import Collector
import PushCore
import XCTest

/// Isolation in the in-flight gate: work an app cannot send takes no room from claims, up to twice
/// `max_in_flight` in all, and a change in what waits wakes a claim waiting for room.
final class CapacityGateTests: XCTestCase {
    /// FCM's rules are its module's: registered, as the worker registers it at start-up.
    override class func setUp() {
        super.setUp()
        _ = PushProvider.fcm
    }

    func testWaitingWorkTakesNoRoomUpToTheHardLimit() async {
        let board = AppWaitBoard()
        let app = AppWaitBoard.App(provider: .fcm, topic: "t")
        board.register(app, lanes: [0])
        let gate = CapacityGate(limit: 100, board: board)
        await gate.add(100)
        var room = await gate.room
        XCTAssertEqual(room, 0, "full of work that can go")
        board.report(lane: 0, waiting: true, queued: 80, reason: "no credential")
        XCTAssertTrue(board.isWaiting(app))
        room = await gate.room
        XCTAssertEqual(room, 80, "what waits takes no room")
        await gate.add(80)
        room = await gate.room
        XCTAssertEqual(room, 0)
        board.report(lane: 0, waiting: true, queued: 180)
        room = await gate.room
        XCTAssertEqual(room, 20, "never past twice the limit in all")
        board.report(lane: 0, waiting: false, queued: 180)
        XCTAssertFalse(board.isWaiting(app))
        room = await gate.room
        XCTAssertEqual(room, 0, "work that can go again counts again")
    }

    func testAnAppWaitsOnlyWhenNoneOfItsLanesCanSend() {
        let board = AppWaitBoard()
        let app = AppWaitBoard.App(provider: .apns, topic: "t")
        board.register(app, lanes: [3, 4])
        board.report(lane: 3, waiting: true, queued: 10)
        XCTAssertFalse(board.isWaiting(app), "lane 4 still sends")
        board.report(lane: 4, waiting: true, queued: 5)
        XCTAssertTrue(board.isWaiting(app))
        XCTAssertEqual(board.waitingNotifications, 15)
        XCTAssertFalse(board.isWaiting(AppWaitBoard.App(provider: .fcm, topic: "t")), "another provider's app of that name")
    }

    func testAChangeInWhatWaitsWakesAClaimWaitingForRoom() async {
        let board = AppWaitBoard()
        board.register(AppWaitBoard.App(provider: .fcm, topic: "t"), lanes: [0])
        let gate = CapacityGate(limit: 10, board: board)
        await gate.add(10)
        async let woke: Void = gate.waitForRoom(atLeast: 5)
        board.report(lane: 0, waiting: true, queued: 10)
        var changes = board.changes.makeAsyncIterator()
        _ = await changes.next()
        await gate.waitingChanged()
        await woke
        let room = await gate.room
        XCTAssertEqual(room, 10)
    }
}
