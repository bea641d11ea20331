@testable import Pusher
import XCTest

/// The life of a scheduler as its submitters see it: running, draining, aborting, ended; who is resumed when.
final class IntakePhaseTests: XCTestCase {
    func testADrainWaitsForTheEndAndIsResumedThen() {
        var phase = IntakePhase<Int>.running
        XCTAssertFalse(phase.draining)
        XCTAssertTrue(phase.finish(1))
        XCTAssertTrue(phase.finish(2), "a second drain waits too")
        XCTAssertTrue(phase.draining)
        XCTAssertFalse(phase.aborting)
        let (waiters, aborted) = phase.exit()
        XCTAssertEqual(waiters, [1, 2])
        XCTAssertFalse(aborted)
        XCTAssertFalse(phase.finish(3), "after the end: the caller resumes its drain itself")
    }

    func testAnAbortEndsADrainAndKeepsItsWaiters() {
        var phase = IntakePhase<Int>.running
        XCTAssertTrue(phase.finish(1))
        phase.abort()
        XCTAssertTrue(phase.aborting)
        XCTAssertFalse(phase.draining, "an abort ends the thread at once, not once drained")
        XCTAssertTrue(phase.finish(2), "a drain asked for after the abort is resumed at the end too")
        phase.abort()
        let (waiters, aborted) = phase.exit()
        XCTAssertEqual(waiters, [1, 2])
        XCTAssertTrue(aborted)
    }

    func testAnAbortWithoutADrainAndAfterTheEnd() {
        var phase = IntakePhase<Int>.running
        phase.abort()
        let (waiters, aborted) = phase.exit()
        XCTAssertEqual(waiters, [])
        XCTAssertTrue(aborted)
        phase.abort()
        XCTAssertFalse(phase.aborting, "after the end an abort changes nothing")
        XCTAssertEqual(phase.exit().waiters, [])
    }
}
