import Foundation
@testable import QueueProtocol
import RedisClient
import XCTest

/// Issue 32: an error about a reply the queue scripts should not have given is logged, so it carries what
/// the reply looked like, never what it held: claimed elements hold device tokens (secrets never reach a log).
final class UnexpectedReplyTests: XCTestCase {
    private let token = "8f2a4c6e8b0d1f3a5c7e9b1d3f5a7c9e0b2d4f6a8c0e2b4d6f8a0c2e4b6d8f0a"
    private var element: [UInt8] { Array(#"{"id":"m1","topic":"com.example","tokens":["\#(token)"],"payload":{}}"#.utf8) }

    /// The token neither as text nor as the byte list Swift prints for `[UInt8]`, and the description short.
    private func assertClipped(_ error: Error, file: StaticString = #filePath, line: UInt = #line) {
        let description = "\(error)"
        XCTAssertFalse(description.contains(token), description, file: file, line: line)
        let tokenBytes = token.utf8.map(String.init).joined(separator: ", ")
        XCTAssertFalse(description.contains(tokenBytes), "the token's bytes: \(description)", file: file, line: line)
        XCTAssertLessThan(description.count, 300, description, file: file, line: line)
    }

    func testAClaimReplyOfTheWrongShapeIsDescribedWithoutItsElements() throws {
        // One part short (a script of another version, say): the elements are there, the shape is wrong.
        let reply = RedisReply.array([.integer(7), .array([.bulk(element), .bulk(element)]), .array([]), .integer(0), .integer(0), .integer(2)])
        XCTAssertThrowsError(try WorkQueue.claim(from: reply)) { error in
            assertClipped(error)
            XCTAssertTrue("\(error)".hasPrefix("unexpected Redis reply: claim: "), "\(error)")
        }
        // A well-formed reply reads as before.
        let good = RedisReply.array([.integer(7), .array([.bulk(element)]), .array([.integer(0)]), .integer(0), .integer(0), .integer(1), .integer(0)])
        let (claim, first) = try WorkQueue.claim(from: good)
        XCTAssertEqual(first, 7)
        XCTAssertEqual(claim.elements, [ClaimedElement(seq: 7, raw: element, counted: true)])
    }

    func testAClaimedReadBackOfTheWrongShapeIsDescribedWithoutItsElements() {
        let reply = RedisReply.array([.array([.bulk(element), .integer(0)])])
        XCTAssertThrowsError(try WorkQueue.claimed(from: reply, seqs: [1, 2])) { assertClipped($0) }
    }

    func testTheShapeOfAnyReplyHoldsNoTextButErrorCodes() {
        let nested = RedisReply.array([.integer(3), .array([.bulk(element), .status(token), .null]),
                                       .error("WRONGTYPE Operation against a key holding the wrong kind of value \(token)")])
        let shape = nested.shape
        XCTAssertFalse(shape.contains(token), shape)
        XCTAssertTrue(shape.contains("WRONGTYPE"), "the error's code says what went wrong: \(shape)")
        XCTAssertTrue(shape.contains("\(element.count) bytes"), shape)
        let long = RedisReply.array(Array(repeating: .bulk(element), count: 1000))
        XCTAssertLessThan(long.shape.count, 300, "a long reply is cut: \(long.shape)")
    }
}
