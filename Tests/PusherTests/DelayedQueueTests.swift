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

    /// The tokens of a batch that retry together share a due time and must come out together and in order,
    /// whatever else waits for the same time.
    func testElementsDueAtTheSameTimeComeOutInTheOrderTheyWentIn() {
        var queue = DelayedQueue<Int>()
        for index in 0..<1000 { queue.insert(index, due: index % 3 == 0 ? 7 : UInt64(index % 5)) }
        var out: [Int] = []
        while let index = queue.popDue(now: 10) { out.append(index) }
        let dueSeven = out.filter { $0 % 3 == 0 }
        XCTAssertEqual(dueSeven, (0..<1000).filter { $0 % 3 == 0 }, "in insertion order")
        XCTAssertEqual(Array(out.suffix(dueSeven.count)), dueSeven, "together, after every earlier due time")
        for due in 0..<5 {
            let group = out.filter { $0 % 3 != 0 && $0 % 5 == due }
            XCTAssertEqual(group, group.sorted())
        }
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
