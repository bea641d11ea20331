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
        XCTAssertNil(batcher.add(message(1, .private)))
        XCTAssertNil(batcher.add(message(2, .group)))
        let full = batcher.add(message(3, .private))
        XCTAssertEqual(full?.messages.map(\.seq), [1, 3])
        XCTAssertEqual(full?.kind, .private)
        XCTAssertEqual(batcher.drain().map { $0.messages.map(\.seq) }, [[2]])
    }

    func testDeadlineEmitsOnlyItsOwnWindow() {
        var bounds = BatchBounds()
        bounds.private = 2
        var batcher = WindowBatcher(bounds: bounds)
        _ = batcher.add(message(1, .private))
        _ = batcher.add(message(2, .private))  // full: left by size, generation 1 is over
        _ = batcher.add(message(3, .private))
        let opened = batcher.openedWindows()
        XCTAssertEqual(opened.count, 1)
        guard let generation = opened.first?.generation else { return XCTFail("a new window starts") }
        XCTAssertNil(batcher.deadline(key: .init(kind: .private, lane: .chat), generation: 1), "the old window's timer must not cut the new one short")
        XCTAssertEqual(batcher.deadline(key: .init(kind: .private, lane: .chat), generation: generation)?.messages.map(\.seq), [3])
        XCTAssertTrue(batcher.drain().isEmpty)
    }

    /// A claim's windows that fill up within it need no timer: only those it leaves open get one, once.
    func testOnlyWindowsLeftOpenAskForATimer() {
        var bounds = BatchBounds()
        bounds.private = 2
        bounds.group = 2
        var batcher = WindowBatcher(bounds: bounds)
        // One claim: five private messages (two full windows and one open) and two group messages (full).
        var full: [[UInt64]] = []
        for (seq, kind) in [(1, MessageKind.private), (2, .private), (3, .group), (4, .private), (5, .group), (6, .private), (7, .private)] {
            if let batch = batcher.add(message(UInt64(seq), kind)) { full.append(batch.messages.map(\.seq)) }
        }
        XCTAssertEqual(full, [[1, 2], [3, 5], [4, 6]])
        let opened = batcher.openedWindows()
        XCTAssertEqual(opened.map(\.key), [.init(kind: .private, lane: .chat)])
        XCTAssertTrue(batcher.openedWindows().isEmpty, "a window asks for its timer once")
        // The open window keeps its timer across the next claim, which adds to it without opening a new one.
        XCTAssertNil(batcher.add(message(8, .system)))
        XCTAssertEqual(batcher.add(message(9, .private))?.messages.map(\.seq), [7, 9])
        XCTAssertEqual(batcher.openedWindows().map(\.key), [.init(kind: .system, lane: .chat)])
        XCTAssertNil(batcher.deadline(key: .init(kind: .private, lane: .chat), generation: opened[0].generation))
    }
}
