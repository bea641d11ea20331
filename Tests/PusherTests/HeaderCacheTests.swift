import ProviderKit
@testable import Pusher
import PushCore
import XCTest

/// A request's headers are built once per job and credential generation, and shared by jobs with the same push
/// headers; for a service whose headers carry the time (`PushService.headerLifetimeMillis`), once per time slice as
/// well, so a retry minutes later never goes out with the first attempt's timestamp.
final class HeaderCacheTests: XCTestCase {
    final class Block {
        let number: Int
        init(_ number: Int) { self.number = number }
    }

    private func job(seq: UInt64) -> JobContext {
        let headers = PushHeaders(topic: "com.example.chat", appTopic: "com.example.chat", pushType: "", priority: 10,
                                  expiration: nil, collapseID: nil)
        return JobContext(job: PushJob(message: PushMessage(seq: seq, id: "m\(seq)", kind: .private, uuid: nil, headers: headers,
                                                            payload: Array("{}".utf8), tokens: ["t"], enqueuedAtMillis: nil)))
    }

    func testHeadersAreBuiltAgainInANewTimeSliceAndForANewCredentialOnly() {
        var cache = HeaderCache<Block>()
        var built = 0
        let build: (JobContext, String?) -> Block = { _, _ in
            built += 1
            return Block(built)
        }
        let first = job(seq: 1), second = job(seq: 2)
        XCTAssertEqual(cache.block(for: first, generation: 1, epoch: 0, bearer: "b", build: build).number, 1)
        XCTAssertEqual(cache.block(for: first, generation: 1, epoch: 0, bearer: "b", build: build).number, 1, "the job's own")
        XCTAssertEqual(cache.block(for: second, generation: 1, epoch: 0, bearer: "b", build: build).number, 1, "shared by a job with the same headers")
        XCTAssertEqual(cache.block(for: first, generation: 1, epoch: 1, bearer: "b", build: build).number, 2, "a new time slice")
        XCTAssertEqual(cache.block(for: second, generation: 1, epoch: 1, bearer: "b", build: build).number, 2)
        XCTAssertEqual(cache.block(for: first, generation: 2, epoch: 1, bearer: "c", build: build).number, 3, "a renewed credential")
        XCTAssertEqual(built, 3)
    }
}
