import Collector
import PushCore
import XCTest

final class WindowBatcherTests: XCTestCase {
    private func message(_ seq: UInt64, _ kind: MessageKind) -> PushMessage {
        let headers = PushHeaders(topic: "t", appTopic: "t", pushType: "alert", priority: 10, expiration: 0, collapseID: nil)
        return PushMessage(seq: seq, id: "m\(seq)", kind: kind, uuid: nil, headers: headers, payload: [], tokens: ["aa"], enqueuedAtMillis: nil)
    }

    func testSizeBoundEmitsAtOncePerKind() {
        var bounds = BatchBounds()
        bounds.private = 2
        bounds.group = 3
        var batcher = WindowBatcher(bounds: bounds)
        let first = batcher.add(message(1, .private))
        XCTAssertNil(first.batch)
        XCTAssertEqual(first.effect, .startTimer(.init(kind: .private, lane: .chat), generation: 1))
        XCTAssertNil(batcher.add(message(2, .group)).batch)
        let full = batcher.add(message(3, .private))
        XCTAssertEqual(full.batch?.messages.map(\.seq), [1, 3])
        XCTAssertEqual(full.batch?.kind, .private)
        XCTAssertEqual(batcher.drain().map { $0.messages.map(\.seq) }, [[2]])
    }

    func testDeadlineEmitsOnlyItsOwnWindow() {
        var bounds = BatchBounds()
        bounds.private = 2
        var batcher = WindowBatcher(bounds: bounds)
        _ = batcher.add(message(1, .private))
        _ = batcher.add(message(2, .private))  // full: left by size, generation 1 is over
        let next = batcher.add(message(3, .private))
        guard case .startTimer(_, let generation) = next.effect else { return XCTFail("a new window starts") }
        XCTAssertNil(batcher.deadline(key: .init(kind: .private, lane: .chat), generation: 1), "the old window's timer must not cut the new one short")
        XCTAssertEqual(batcher.deadline(key: .init(kind: .private, lane: .chat), generation: generation)?.messages.map(\.seq), [3])
        XCTAssertTrue(batcher.drain().isEmpty)
    }
}
