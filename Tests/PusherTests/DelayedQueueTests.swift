@testable import Pusher
import XCTest

final class DelayedQueueTests: XCTestCase {
    func testElementsComeOutInDueOrderOnlyOnceDue() {
        var queue = DelayedQueue<Int>()
        let dues: [UInt64] = [50, 10, 40, 10, 30, 20, 60, 0]
        for (index, due) in dues.enumerated() { queue.insert(index, due: due) }
        XCTAssertEqual(queue.soonest, 0)
        var out: [UInt64] = []
        while let index = queue.popDue(now: 45) { out.append(dues[index]) }
        XCTAssertEqual(out, [0, 10, 10, 20, 30, 40])
        XCTAssertEqual(queue.count, 2)
        XCTAssertNil(queue.popDue(now: 49))
        XCTAssertEqual(queue.popDue(now: 100).map { dues[$0] }, 50)
    }

    /// A whole window answered 503 at once: 100,000 retries scheduled and taken back in order.
    func testAHundredThousandRetriesStayOrdered() {
        var queue = DelayedQueue<UInt64>()
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<100_000 {
            let due = UInt64.random(in: 0..<1_000_000, using: &generator)
            queue.insert(due, due: due)
        }
        var last: UInt64 = 0
        var taken = 0
        while let due = queue.popDue(now: .max) {
            XCTAssertGreaterThanOrEqual(due, last)
            last = due
            taken += 1
        }
        XCTAssertEqual(taken, 100_000)
    }
}
