import Merger
import PushCore
import XCTest

final class MergerTests: XCTestCase {
    private func message(_ seq: UInt64, _ tokens: [String], kind: MessageKind = .group, uuid: String? = nil,
                         payload: String = #"{"aps":{"alert":"hi"}}"#, priority: Int = 10) -> PushMessage {
        let headers = PushHeaders(topic: "t", appTopic: "t", pushType: "alert", priority: priority, expiration: 0, collapseID: nil)
        return PushMessage(seq: seq, id: "m\(seq)", kind: kind, uuid: uuid, headers: headers,
                           payload: Array(payload.utf8), tokens: tokens, enqueuedAtMillis: nil)
    }

    func testIdenticalGroupMessagesBecomeOneJobWithTheUnionOfTokens() {
        let jobs = Merger().merge(MessageBatch(kind: .group, messages: [
            message(1, ["aa", "bb"], uuid: "u1"), message(2, ["bb", "cc"], uuid: "u1"), message(3, ["dd"], uuid: "u1"),
        ]))
        XCTAssertEqual(jobs.count, 1)
        let job = jobs[0]
        XCTAssertEqual(job.tokens, ["aa", "bb", "cc", "dd"], "a token asked for twice is sent once")
        XCTAssertEqual(job.sources, [1, 2, 3])
        XCTAssertEqual(job.owners(ofToken: 1), [1, 2], "both messages hear of the shared token's outcome")
        XCTAssertEqual(job.owners(ofToken: 2), [2])
        XCTAssertEqual(job.owners(ofToken: 3), [3])
        XCTAssertEqual(job.owners(ofToken: 0), [1], "the first message's tokens, mapped before the second joined")
    }

    func testAJobOfOneMessageAnswersForAllItsTokensWithoutAnOwnerArray() {
        let jobs = Merger().merge(MessageBatch(kind: .private, messages: [message(7, ["aa", "bb", "cc"], kind: .private)]))
        XCTAssertEqual(jobs.count, 1)
        XCTAssertTrue(jobs[0].owner.isEmpty)
        XCTAssertEqual((0..<3).map { jobs[0].owners(ofToken: $0) }, [[7], [7], [7]])
        XCTAssertEqual(jobs[0].firstOwner(ofToken: 2), 7)
    }

    func testDifferencesKeepMessagesApart() {
        let jobs = Merger().merge(MessageBatch(kind: .system, messages: [
            message(1, ["aa"], uuid: "u1"), message(2, ["bb"], uuid: "u2"),
            message(3, ["cc"], uuid: "u1", payload: #"{"aps":{"alert":"other"}}"#),
            message(4, ["dd"], uuid: "u1", priority: 5), message(5, ["ee"], uuid: "u1"),
        ]))
        XCTAssertEqual(jobs.map(\.sources), [[1, 5], [2], [3], [4]])
    }

    func testPrivateMessagesAreNeverMerged() {
        let jobs = Merger().merge(MessageBatch(kind: .private, messages: [
            message(1, ["aa"], kind: .private), message(2, ["bb"], kind: .private),
        ]))
        XCTAssertEqual(jobs.map(\.sources), [[1], [2]])
    }
}
