import APNsProvider
@testable import PushCore
import XCTest

/// Plain elements are read field by field, anything else as a tree; both must give the same verdict, the same
/// message and the same reason for every element. These are the cases where the two paths part: what the
/// direct reader takes, and each thing that makes it give up.
final class MessageFieldReaderTests: XCTestCase {
    /// The default provider's message rules are its module's: registered, as the worker registers it.
    override class func setUp() {
        super.setUp()
        _ = APNsModule.provider
    }

    let direct = MessageParser()
    let tree = MessageParser(readsFieldsDirectly: false)
    let now: Int64 = 1_800_000_000
    static let token = String(repeating: "ab", count: 32)

    private func assertSameVerdict(_ text: String, directly: Bool, file: StaticString = #filePath, line: UInt = #line) {
        let bytes = Array(text.utf8)
        XCTAssertEqual(String(describing: direct.parse(bytes, seq: 3, now: now)), String(describing: tree.parse(bytes, seq: 3, now: now)),
                       text, file: file, line: line)
        XCTAssertEqual(MessageFieldReader.read(bytes, maxDepth: direct.limits.maxDepth) != nil, directly,
                       "read directly: \(text)", file: file, line: line)
    }

    func testPlainElementsAreReadDirectlyWithTheTreesResult() {
        let t = Self.token
        for text in [
            #"{"id":"m1","topic":"com.example.app","tokens":["\#(t)"],"payload":{"aps":{"alert":"hi"}}}"#,
            #" { "id" : "m1" , "topic":"com.example.app","tokens":[ "\#(t)" , "\#(t.uppercased())" ],"payload": {"b":1, "a":[2]} } "#,
            #"{"id":"m1","kind":"group","uuid":"u","topic":"com.example.app.voip","push_type":"voip","priority":5,"expiration":"+60","collapse_id":"c","enqueued_at":1700000000000,"tokens":["\#(t)","zz"],"payload":{"aps":{"content-available":1}}}"#,
            #"{"id":"m1","topic":"com.example.app","tokens":["\#(t)"],"payload":{"aps":{"content-available":1}},"extra":{"x":[1,{"y":null}]},"more":true}"#,
            #"{"id":"m1","topic":"com.example.app","tokens":["\#(t)"],"payload":{"aps":{"alert":"caf\u00e9"}}}"#,
            #"{"id":"m1","topic":"com.example.app","tokens":[],"payload":{}}"#,
            #"{"id":"m1","topic":"com.example.app","tokens":["nothex"],"payload":{}}"#,
            #"{"id":"m1","topic":"com.example.app","payload":{}}"#,
            #"{"id":1,"topic":"com.example.app","tokens":["\#(t)"],"payload":{}}"#,
            #"{"id":"m1","topic":"com.example.app","tokens":["\#(t)"],"payload":[]}"#,
            "{}",
        ] {
            assertSameVerdict(text, directly: true)
        }
    }

    func testAnythingElseIsLeftToTheTreeWithItsVerdict() {
        let t = Self.token
        for text in [
            #"{"\u0069d":"m1","topic":"com.example.app","tokens":["\#(t)"],"payload":{}}"#,  // escaped key
            #"{"id":"m1","topic":"com.example.app","tokens":["\#(t)"],"payload":{},"caf\#u{E9}":1}"#,  // non-ASCII key
            #"{"id":"m1","id":"m2","topic":"com.example.app","tokens":["\#(t)"],"payload":{}}"#,  // duplicate field
            #"{"id":"m1","x":1,"topic":"com.example.app","x":2,"tokens":["\#(t)"],"payload":{}}"#,  // duplicate other key
            #"{"id":"m1","topic":"com.example.app","tokens":["\#(t)",7],"payload":{}}"#,  // a token that is not a string
            #"{"id":"m1","topic":"com.example.app","tokens":"\#(t)","payload":{}}"#,  // tokens not an array
            #"{"id":"m1","topic":"com.example.app","tokens":["\#(t)"],"payload":{}} x"#,  // trailing data
            #"{"id":"m1","topic":"com.example.app","tokens":["\#(t)"],"payload":{"a":01}}"#,  // bad number
            #"{"id":"m1","topic":"com.example.app","tokens":["\#(t)"],"payload":{}"#,  // unterminated
            #"{"id":"m1","topic":"com.example.app","tokens":["\#(t)"],"payload":{},}"#,  // trailing comma
            #"{"id":"m1","topic":"com.example.app","tokens":["\#(t)"]"payload":{}}"#,  // missing comma
            #"{"id" "m1"}"#,
            #"{id:"m1"}"#,
            #"["id","m1"]"#,
            #""id""#,
            "",
            "{",
        ] {
            assertSameVerdict(text, directly: false)
        }
    }

    /// Unknown members are checked for repeats by comparing with each earlier one; past the tree's own limit for
    /// that (where it switches to a set) the reader leaves the element to the tree, so a megabyte of distinct
    /// short keys costs linear time, not quadratic.
    func testManyOtherMembersAreLeftToTheTree() {
        let t = Self.token
        let few = (0..<JSONParser.linearKeyScanLimit).map { #""x\#($0)":0"# }.joined(separator: ",")
        let many = (0...JSONParser.linearKeyScanLimit).map { #""x\#($0)":0"# }.joined(separator: ",")
        assertSameVerdict(#"{"id":"m1","topic":"com.example.app","tokens":["\#(t)"],"payload":{},\#(few)}"#, directly: true)
        assertSameVerdict(#"{"id":"m1","topic":"com.example.app","tokens":["\#(t)"],"payload":{},\#(many)}"#, directly: false)
    }

    func testNestingIsLimitedAsTheTreeLimitsIt() {
        let t = Self.token
        let limit = JSONParser.defaultMaxDepth
        for depth in [limit - 2, limit - 1, limit, limit + 1] {
            let nested = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
            let text = #"{"id":"m1","topic":"com.example.app","tokens":["\#(t)"],"payload":{"n":\#(nested)},"x":\#(nested)}"#
            let bytes = Array(text.utf8)
            XCTAssertEqual(String(describing: direct.parse(bytes, seq: 3, now: now)), String(describing: tree.parse(bytes, seq: 3, now: now)),
                           "nested \(depth)")
        }
    }
}
