import Collector
import PushCore
import QueueProtocol
import XCTest

/// The ledger gives each token's room back as the token reaches its outcome, so a large message's tail does
/// not keep the next message from being claimed; the message's last unit and its bytes wait for acknowledgement.
final class OutcomeLedgerTests: XCTestCase {
    private func registration(claimSequence: UInt64, tokens: Int) -> ClaimRegistration {
        let element = ClaimedElement(seq: claimSequence, raw: Array(repeating: 0x20, count: 100))
        return ClaimRegistration(element: element, seq: PipelineSeq.make(claimSequence: claimSequence, shard: 0),
                                 messageID: "m\(claimSequence)", appTopic: "t", pendingTokens: tokens,
                                 notifications: max(1, tokens), records: [])
    }

    private func delivered(_ claim: ClaimRegistration, _ token: Int) -> Resolution {
        Resolution(seq: claim.seq, token: "t\(token)", outcome: .delivered)
    }

    func testEachResolvedTokenGivesItsRoomBackInItsLaneAndTheLastWaitsForAcknowledgement() {
        var ledger = OutcomeLedger(workerID: "w")
        var completed: [CompletedMessage] = []
        let bulk = registration(claimSequence: Lane.bulkSequenceBase + 7, tokens: 4)
        let chat = registration(claimSequence: 3, tokens: 2)
        ledger.register(bulk, into: &completed)
        ledger.register(chat, into: &completed)
        XCTAssertEqual(ledger.takeReleased().bulk, 0)

        ledger.resolve(delivered(bulk, 0), into: &completed)
        ledger.resolve(delivered(bulk, 1), into: &completed)
        var released = ledger.takeReleased()
        XCTAssertEqual(released.bulk, 2)
        XCTAssertEqual(released.chat, 0)
        XCTAssertEqual(ledger.takeReleased().bulk, 0, "room is handed out once")

        ledger.resolve(delivered(chat, 0), into: &completed)
        ledger.resolve(delivered(bulk, 2), into: &completed)
        ledger.resolve(delivered(bulk, 3), into: &completed)
        released = ledger.takeReleased()
        XCTAssertEqual(released.chat, 1)
        XCTAssertEqual(released.bulk, 1, "the message's last token keeps its unit until acknowledgement")
        XCTAssertEqual(completed.count, 1)
        XCTAssertEqual(completed.first?.notifications, 1)
        XCTAssertEqual(completed.first?.bytes, 100, "bytes stay held until acknowledgement")

        // Everything the message held is given back exactly once: early per token plus at acknowledgement.
        XCTAssertEqual(2 + 1 + (completed.first?.notifications ?? 0), 4)
    }

    func testAFilteredMessageGivesBackWhatItStillHolds() {
        var ledger = OutcomeLedger(workerID: "w")
        var completed: [CompletedMessage] = []
        let chat = registration(claimSequence: 5, tokens: 3)
        ledger.register(chat, into: &completed)
        ledger.resolve(delivered(chat, 0), into: &completed)
        ledger.filter(seq: chat.seq, topic: "t", word: "w", into: &completed)
        XCTAssertEqual(ledger.takeReleased().chat, 1)
        XCTAssertEqual(completed.first?.notifications, 2)
    }

    func testALostMessageGivesBackPerTokenToo() {
        var ledger = OutcomeLedger(workerID: "w")
        var completed: [CompletedMessage] = []
        let chat = registration(claimSequence: 9, tokens: 3)
        ledger.register(chat, into: &completed)
        XCTAssertEqual(ledger.markLost(keeping: []), [chat.seq])
        for token in 0..<3 {
            ledger.resolve(Resolution(seq: chat.seq, token: "t\(token)", outcome: .claimLost), into: &completed)
        }
        XCTAssertEqual(ledger.takeReleased().chat, 2)
        XCTAssertEqual(completed.first?.notifications, 1)
        XCTAssertEqual(completed.first?.lost, true)
    }
}
