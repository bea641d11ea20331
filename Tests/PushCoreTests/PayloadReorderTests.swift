import APNsProvider
import FCMProvider
import PushCore
import XCTest

/// A payload canonical but for its members' order (producers write `notification` before `data`, `title` before
/// `body`) is sorted as bytes when the element is read (`CanonicalJSON.reorderedObject`), without a tree: the
/// result must be exactly what reading the tree and writing it canonically gives, valid or not, for every provider.
final class PayloadReorderTests: XCTestCase {
    override class func setUp() {
        super.setUp()
        _ = APNsModule.provider
        _ = PushProvider.fcm
    }

    private let direct = MessageParser()
    private let tree = MessageParser(readsFieldsDirectly: false)
    private let now: Int64 = 1_800_000_000

    private func element(_ payload: String, provider: String? = nil) -> [UInt8] {
        let token = provider == "fcm" ? #""d1:APA91b_x""# : #""\#(String(repeating: "ab", count: 32))""#
        let named = provider.map { #""provider":"\#($0)","# } ?? ""
        return Array(#"{"id":"m1",\#(named)"topic":"com.example.chat","tokens":[\#(token)],"payload":\#(payload)}"#.utf8)
    }

    private func assertAlike(_ payload: String, provider: String? = nil, file: StaticString = #filePath, line: UInt = #line) {
        let bytes = element(payload, provider: provider)
        let a = direct.parse(bytes, seq: 1, now: now)
        let b = tree.parse(bytes, seq: 1, now: now)
        XCTAssertEqual(String(describing: a), String(describing: b), payload, file: file, line: line)
    }

    private func payload(of verdict: ParsedElement) -> String? {
        if case .valid(let message, _) = verdict { return String(decoding: message.payload, as: UTF8.self) }
        return nil
    }

    func testAPayloadOutOfOrderIsSortedAsTheTreeWouldWriteIt() throws {
        let given = #"{"data":{"z":1,"a":[{"y":2,"b":3}]},"aps":{"sound":"s","alert":{"title":"t","body":"b"}}}"#
        let sorted = #"{"aps":{"alert":{"body":"b","title":"t"},"sound":"s"},"data":{"a":[{"b":3,"y":2}],"z":1}}"#
        let bytes = Array(given.utf8)
        let reordered = try XCTUnwrap(CanonicalJSON.reorderedObject(in: bytes, from: 0, depth: 0, maxDepth: 64),
                                      "sorted as bytes, without a tree")
        XCTAssertEqual(reordered.end, bytes.count)
        XCTAssertEqual(String(decoding: reordered.canonical, as: UTF8.self), sorted)
        XCTAssertEqual(payload(of: direct.parse(element(given), seq: 1, now: now)), sorted)
        assertAlike(given)
    }

    func testWhatIsNotCanonicalButForItsOrderIsLeftToTheTree() {
        for payload in [#"{"b":1, "a":2}"#, #"{"b":"\u00e9","a":1}"#, #"{"\u0062":1,"a":2}"#, #"{"b":1,"a":2,"b":3}"#] {
            XCTAssertNil(CanonicalJSON.reorderedObject(in: Array(payload.utf8), from: 0, depth: 0, maxDepth: 64), payload)
        }
        let many = "{" + (0..<40).reversed().map { #""k\#($0)":\#($0)"# }.joined(separator: ",") + "}"
        XCTAssertNil(CanonicalJSON.reorderedObject(in: Array(many.utf8), from: 0, depth: 0, maxDepth: 64), "more members than its table")
    }

    func testBothReadersAgreeForEveryProvider() {
        let payloads = [
            #"{"notification":{"title":"Alice","body":"hi"},"data":{"conversation":"c1"}}"#,
            #"{"notification":{"title":1},"data":{"k":"v"}}"#,
            #"{"data":{"from":"x"},"notification":{"body":"b"}}"#,
            #"{"webpush":{},"token":"t","data":{}}"#,
            #"{"notification":{"body":"b"},"android":{"ttl":"60s","priority":"high"}}"#,
            #"{"b":1,"a":2,"b":3}"#,
            #"{"z":{"y":{"x":[3,{"w":1,"v":2}]}},"aps":{"alert":"hi"}}"#,
            #"{"aps":{"content-available":1},"a":1}"#,
            #"{"data":{"k":"v"},"aps":{"content-available":1}}"#,
        ]
        for payload in payloads {
            assertAlike(payload)
            assertAlike(payload, provider: "fcm")
        }
    }

    func testAnFCMPayloadOutOfOrderIsSentSorted() {
        let verdict = direct.parse(element(#"{"notification":{"title":"Alice","body":"hi"},"data":{"c":"1"}}"#, provider: "fcm"),
                                   seq: 1, now: now)
        XCTAssertEqual(payload(of: verdict), #"{"data":{"c":"1"},"notification":{"body":"hi","title":"Alice"}}"#)
    }
}
