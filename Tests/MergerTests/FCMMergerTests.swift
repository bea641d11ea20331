import APNsProvider
@testable import FCMProvider
import Merger
import PushCore
import XCTest

/// Merging works for FCM as for APNs; the provider is part of what must be identical (docs/message-format.md).
final class FCMMergerTests: XCTestCase {
    /// FCM's rules are its module's: registered, as the worker registers it at start-up.
    override class func setUp() {
        super.setUp()
        _ = PushProvider.fcm
    }

    private func message(_ seq: UInt64, _ tokens: [String], provider: PushProvider, payload: String = #"{"data":{"k":"v"}}"#) -> PushMessage {
        let headers = PushHeaders(topic: "app", appTopic: "app", pushType: "", priority: 10, expiration: 0, collapseID: nil,
                                  provider: provider)
        return PushMessage(seq: seq, id: "m\(seq)", kind: .group, uuid: "u1", headers: headers,
                           payload: Array(payload.utf8), tokens: tokens, enqueuedAtMillis: nil)
    }

    func testFCMGroupMessagesMerge() {
        let jobs = Merger().merge(MessageBatch(kind: .group, messages: [
            message(1, ["t:1", "t:2"], provider: .fcm), message(2, ["t:2", "t:3"], provider: .fcm),
        ]))
        XCTAssertEqual(jobs.count, 1)
        XCTAssertEqual(jobs[0].tokens, ["t:1", "t:2", "t:3"])
        XCTAssertEqual(jobs[0].headers.provider, .fcm)
        XCTAssertEqual(jobs[0].owners(ofToken: 1), [1, 2])
    }

    func testAPNsAndFCMMessagesNeverMergeEvenWhenAllElseIsTheSame() {
        let jobs = Merger().merge(MessageBatch(kind: .group, messages: [
            message(1, ["aa"], provider: .apns), message(2, ["bb"], provider: .fcm),
            message(3, ["cc"], provider: .apns), message(4, ["dd"], provider: .fcm),
        ]))
        XCTAssertEqual(jobs.map(\.sources), [[1, 3], [2, 4]])
        XCTAssertEqual(jobs.map(\.headers.provider), [.apns, .fcm])
    }

    /// From the parser: the mapped android fields are part of the payload, so different priorities stay apart.
    func testParsedFCMMessagesMergeOnlyWhenTheirMappedPayloadsAgree() {
        let parser = MessageParser()
        func parsed(_ seq: UInt64, _ token: String, _ extra: String, provider: String = "fcm") -> PushMessage {
            let text = #"{"id":"m\#(seq)","kind":"group","uuid":"u","provider":"\#(provider)","topic":"app","tokens":["\#(token)"],"#
                + #""payload":{}\#(extra)}"#
            guard case .valid(let message, _) = parser.parse(Array(text.utf8), seq: seq, now: 1_800_000_000) else {
                fatalError("invalid: \(text)")
            }
            return message
        }
        let jobs = Merger().merge(MessageBatch(kind: .group, messages: [
            parsed(1, "t1", #","priority":10"#), parsed(2, "t2", #","priority":10"#),
            parsed(3, "t3", #","priority":5"#), parsed(4, "t4", #","priority":1"#),
            parsed(5, "t5", #","priority":10,"payload2":0"#),
        ]))
        XCTAssertEqual(jobs.map(\.sources), [[1, 2, 5], [3], [4]], "the producer's priority is part of the headers, as for APNs")
    }
}
