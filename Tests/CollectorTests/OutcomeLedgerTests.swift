import APNsProvider
@testable import FCMProvider
import Collector
import PushCore
import QueueProtocol
import XCTest

/// The ledger gives each token's room back as the token reaches its outcome, so a large message's tail does
/// not keep the next message from being claimed; the message's last unit and its bytes wait for acknowledgement.
final class OutcomeLedgerTests: XCTestCase {
    /// FCM's rules are its module's: registered, as the worker registers it at start-up.
    override class func setUp() {
        super.setUp()
        _ = PushProvider.fcm
    }

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

    /// The ledger keeps no element: a message with failed tokens completes with one draft per distinct failure,
    /// carrying the tokens that failed that way and the most attempts, beside its other records.
    func testFailedTokensCompleteAsOneDraftPerFailureBesideTheOtherRecords() {
        var ledger = OutcomeLedger(workerID: "w")
        var completed: [CompletedMessage] = []
        let claim = registration(claimSequence: 9, tokens: 4)
        ledger.register(claim, into: &completed)
        let fail = { (token: Int, reason: String, attempts: Int) in
            Resolution(seq: claim.seq, token: "t\(token)", outcome: .failed(reason: reason, status: 500, attempts: attempts))
        }
        ledger.resolve(fail(0, "InternalServerError", 3), into: &completed)
        ledger.resolve(Resolution(seq: claim.seq, token: "t1", outcome: .feedback(reason: "Unregistered", timestampMillis: 1)),
                       into: &completed)
        ledger.resolve(fail(2, "InternalServerError", 5), into: &completed)
        ledger.resolve(fail(3, "Expired", 1), into: &completed)
        XCTAssertEqual(completed.count, 1)
        let message = completed[0]
        XCTAssertEqual(message.seq, 9)
        XCTAssertEqual(message.bytes, 100)
        XCTAssertEqual(message.records.count, 1, "the feedback record")
        XCTAssertEqual(message.deadLetters.map(\.reason), ["Expired", "InternalServerError"])
        XCTAssertEqual(message.deadLetters.map(\.failedTokens), [["t3"], ["t0", "t2"]])
        XCTAssertEqual(message.deadLetters.map(\.attempts), [5, 5], "the message's most attempts, as before")
        XCTAssertEqual(message.deadLetters.map(\.worker), ["w", "w"])
        XCTAssertEqual(ledger.snapshot.deadLettered, 3)
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

    /// `push_notifications_total` is counted where each message's app is known: every token's outcome under its
    /// message's provider and topic, in a tally handed out once (a claim lost to recovery is its new holder's).
    func testOutcomesAreTalliedByProviderAndAppOfTheirMessage() {
        var ledger = OutcomeLedger(workerID: "w")
        var completed: [CompletedMessage] = []
        let chat = registration(claimSequence: 1, tokens: 3)
        var other = registration(claimSequence: 2, tokens: 2)
        other.appTopic = "com.other"
        other.provider = .fcm
        ledger.register(chat, into: &completed)
        ledger.register(other, into: &completed)
        ledger.resolve(delivered(chat, 0), into: &completed)
        ledger.resolve(delivered(other, 0), into: &completed)
        ledger.resolve(delivered(chat, 1), into: &completed)
        ledger.resolve(Resolution(seq: chat.seq, token: "t2", outcome: .failed(reason: "ServiceUnavailable", status: 503, attempts: 3)),
                       into: &completed)
        ledger.resolve(Resolution(seq: other.seq, token: "t1", outcome: .claimLost), into: &completed)
        let counts = ledger.takeOutcomes()
        XCTAssertEqual(counts, [
            OutcomeTally.Key(provider: .apns, app: "t", outcome: "delivered", reason: ""): 2,
            OutcomeTally.Key(provider: .fcm, app: "com.other", outcome: "delivered", reason: ""): 1,
            OutcomeTally.Key(provider: .apns, app: "t", outcome: "dead_letter", reason: "ServiceUnavailable"): 1,
        ])
        XCTAssertTrue(ledger.takeOutcomes().isEmpty, "handed out once")
    }
}
