@testable import PushEmulator
import XCTest

/// The order delayed answers leave in (`DelayedAnswers`): by due time, first in first out when due at the same time.
final class DueTimeQueueTests: XCTestCase {
    func testItemsLeaveInOrderOfDueTimeEachOnce() {
        var queue = DueTimeQueue<Int>()
        var generator = SystemRandomNumberGenerator()
        // Latency 50 ms with 0...20 ms of jitter, several items per millisecond, arriving over 200 ms.
        var due: [Int: UInt64] = [:]
        for item in 0..<5_000 {
            let arrival = UInt64(item / 25)
            due[item] = arrival + 50 + UInt64.random(in: 0...20, using: &generator)
            queue.insert(item, due: due[item]!)
        }
        XCTAssertEqual(queue.count, 5_000)

        var out: [Int] = []
        var now: UInt64 = 0
        while !queue.isEmpty {
            let first = queue.firstDue!
            XCTAssertNil(queue.removeFirst(dueBy: first - 1), "nothing leaves before it is due")
            now = first
            while let item = queue.removeFirst(dueBy: now) { out.append(item) }
        }
        XCTAssertEqual(out.count, 5_000)
        XCTAssertEqual(Set(out).count, 5_000, "each item once")
        for (earlier, later) in zip(out, out.dropFirst()) {
            XCTAssertLessThanOrEqual(due[earlier]!, due[later]!, "in order of due time")
            if due[earlier]! == due[later]! { XCTAssertLessThan(earlier, later, "first in first out when due at the same time") }
        }
        XCTAssertNil(queue.firstDue)
    }

    func testAConstantLatencyKeepsArrivalOrder() {
        var queue = DueTimeQueue<Int>()
        for item in 0..<1_000 { queue.insert(item, due: 100 + UInt64(item / 7)) }
        var out: [Int] = []
        while let item = queue.removeFirst(dueBy: 10_000) { out.append(item) }
        XCTAssertEqual(out, Array(0..<1_000))
    }
}
