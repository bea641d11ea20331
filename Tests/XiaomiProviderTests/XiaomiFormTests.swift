import Foundation
import ProviderKit
import PushCore
@testable import XiaomiProvider
import XCTest

/// The form body of a MiPush send, read back field by field: The mapping of the common Android payload,
/// the app's channel and template, the `xiaomi` object last, the ttl counted at send time, the collapse id's
/// hash, and the regIds of the request in its order.
final class XiaomiFormTests: XCTestCase {
    private func body(_ payload: String, app: XiaomiApp = XiaomiFixtures.app(), tokens: [String] = ["r1", "r2"],
                      request: RequestTokens? = nil, expiration: Int64? = nil, collapseID: String? = nil,
                      now: Int64 = XiaomiFixtures.wallMillis) throws -> [UInt8] {
        let service = try XiaomiFixtures.service(app, wallMillis: { now })
        let context = JobContext(job: XiaomiFixtures.job(payload: payload, tokens: tokens, expiration: expiration, collapseID: collapseID))
        return XiaomiFixtures.body(service, context, request ?? RequestTokens(0, rest: Array(1..<tokens.count)))
    }

    func testAFullPayloadMapsEveryCommonField() throws {
        let payload = #"{"data":{"kind":"dm","cid":"c 1&2"},"notification":{"title":"Alice","body":"hi there & 100% 标","image":"https://example.com/a.png"},"xiaomi":{"extra.jobkey":"j1"}}"#
        let bytes = try body(payload, app: XiaomiFixtures.app(channelID: "im-private"), collapseID: "chat-42")
        let fields = XiaomiFixtures.fields(bytes)
        XCTAssertEqual(fields.map(\.name), ["restricted_package_name", "pass_through", "notify_type", "title", "description",
                                            "payload", "notify_id", "extra.notify_effect", "extra.jobkey", "extra.channel_id",
                                            "registration_id"])
        let map = XiaomiFixtures.fieldMap(bytes)
        XCTAssertEqual(map["restricted_package_name"], "com.example.chat")
        XCTAssertEqual(map["pass_through"], "0")
        XCTAssertEqual(map["notify_type"], "-1")
        XCTAssertEqual(map["title"], "Alice")
        XCTAssertEqual(map["description"], "hi there & 100% 标")
        XCTAssertEqual(map["payload"], #"{"cid":"c 1&2","kind":"dm"}"#, "data as JSON text, sent as a string")
        XCTAssertEqual(map["notify_id"], String(CollapseNotifyID.of("chat-42")))
        XCTAssertEqual(map["extra.notify_effect"], "1", "a tap opens the app")
        XCTAssertEqual(map["extra.channel_id"], "im-private")
        XCTAssertEqual(map["registration_id"], "r1,r2")
        XCTAssertNil(map["time_to_live"], "no expiration: Xiaomi's own default")
        XCTAssertFalse(map.values.contains("https://example.com/a.png"), "an image URL is not a Xiaomi picture")
        // The raw text: UTF-8, %20 for a space, every reserved byte escaped.
        let text = String(decoding: bytes, as: UTF8.self)
        XCTAssertTrue(text.contains("description=hi%20there%20%26%20100%25%20%E6%A0%87&"), text)
        XCTAssertTrue(text.hasSuffix("&registration_id=r1,r2"), text)
    }

    func testAMinimalPayloadSendsOnlyTheDefaults() throws {
        let fields = XiaomiFixtures.fields(try body(#"{"notification":{"title":"T","body":"B"}}"#))
        XCTAssertEqual(fields.map(\.name), ["restricted_package_name", "pass_through", "notify_type", "title", "description",
                                            "notify_id", "extra.notify_effect", "extra.jobkey", "registration_id"])
        XCTAssertEqual(fields.map(\.value), ["com.example.chat", "0", "-1", "T", "B", String(CollapseNotifyID.of("m1")), "1",
                                             MessageKey.of(messageID: "m1"), "r1,r2"], "the notification id and jobkey of the message's id")
    }

    /// Each message goes out in its own class: chat on the private channel with the template, `kind: system` on the
    /// system channel, anything from the bulk list on the bulk channel (never the private one), without the template.
    func testEachMessageClassGoesOnItsOwnChannel() throws {
        let app = XiaomiApp(topic: XiaomiFixtures.topic, appSecretFile: XiaomiFixtures.secretFile("s\n"), channelID: "im-private",
                            templateID: "tpl-chat", systemChannelID: "sys-1", bulkChannelID: "")
        let service = try XiaomiFixtures.service(app)
        func fields(kind: MessageKind, lane: Lane) -> [String: String] {
            var job = XiaomiFixtures.job(payload: #"{"notification":{"title":"T","body":"B"}}"#)
            job.kind = kind
            let seq = lane == .bulk ? PipelineSeq.make(claimSequence: Lane.bulkSequenceBase + 1, shard: 0) : 1
            let message = PushMessage(seq: seq, id: "m", kind: kind, uuid: nil, headers: job.headers, payload: job.payload,
                                      tokens: job.tokens, enqueuedAtMillis: nil)
            let context = JobContext(job: PushJob(message: message))
            return XiaomiFixtures.fieldMap(XiaomiFixtures.body(service, context, RequestTokens(0, rest: [1])))
        }
        let chat = fields(kind: .private, lane: .chat)
        XCTAssertEqual(chat["extra.channel_id"], "im-private")
        XCTAssertEqual(chat["extra.template_id"], "tpl-chat")
        XCTAssertEqual(fields(kind: .group, lane: .chat)["extra.channel_id"], "im-private")
        let system = fields(kind: .system, lane: .chat)
        XCTAssertEqual(system["extra.channel_id"], "sys-1")
        XCTAssertNil(system["extra.template_id"], "the template is the private messages'")
        let bulk = fields(kind: .private, lane: .bulk)
        XCTAssertNil(bulk["extra.channel_id"], "no bulk channel configured: Xiaomi's default, never the private channel")
        XCTAssertNil(bulk["extra.template_id"])
        XCTAssertNil(fields(kind: .system, lane: .bulk)["extra.channel_id"], "a system notice sent as a broadcast is bulk")
    }

    func testTheAppsChannelAndTemplate() throws {
        let app = XiaomiFixtures.app(channelID: "im-private", templateID: "tpl-chat")
        let map = XiaomiFixtures.fieldMap(try body(#"{"notification":{"title":"Alice","body":"hi \"you\""}}"#, app: app))
        XCTAssertEqual(map["extra.channel_id"], "im-private")
        XCTAssertEqual(map["extra.template_id"], "tpl-chat")
        XCTAssertEqual(map["extra.template_param"], #"{"body":"hi \"you\"","title":"Alice"}"#, "title and body as its two parameters")

        let given = XiaomiFixtures.fieldMap(try body(
            #"{"notification":{"title":"Alice","body":"hi"},"xiaomi":{"extra.template_param":{"name":"Alice"},"extra.channel_id":"im-other"}}"#,
            app: app))
        XCTAssertEqual(given["extra.template_param"], #"{"name":"Alice"}"#, "the message's own parameters win")
        XCTAssertEqual(given["extra.channel_id"], "im-other", "the message's channel wins")
        XCTAssertEqual(given["extra.template_id"], "tpl-chat")

        let none = XiaomiFixtures.fieldMap(try body(#"{"notification":{"title":"T","body":"B"}}"#))
        XCTAssertNil(none["extra.channel_id"])
        XCTAssertNil(none["extra.template_id"])
        XCTAssertNil(none["extra.template_param"])
    }

    func testTheXiaomiObjectGoesInLastReplacingWhatItNames() throws {
        let payload = #"""
        {"notification":{"title":"T","body":"B"},"xiaomi":{"extra.notify_effect":"2","extra.intent_uri":"intent:#Intent;end",
         "notify_type":1,"extra":{"channel_id":"im-nested","sound_uri":"android.resource://x/raw/ding"},"pass_through":0,
         "registration_id":"evil-1,evil-2","description":null,"extra.flag":true,"extra.list":[1,"a"],"":"skipped"}}
        """#
        let bytes = try body(payload, app: XiaomiFixtures.app(channelID: "im-private"))
        let fields = XiaomiFixtures.fields(bytes)
        XCTAssertEqual(fields.map(\.name), ["restricted_package_name", "pass_through", "notify_type", "title", "notify_id",
                                            "extra.notify_effect", "extra.jobkey", "extra.channel_id", "extra.intent_uri", "extra.sound_uri", "extra.flag", "extra.list",
                                            "registration_id"], "replaced in place, new ones appended, null removes, each once")
        let map = XiaomiFixtures.fieldMap(bytes)
        XCTAssertEqual(map["extra.notify_effect"], "2")
        XCTAssertEqual(map["notify_type"], "1", "a number as written")
        XCTAssertEqual(map["extra.channel_id"], "im-nested", "an `extra` object is spread into extra.<key>")
        XCTAssertEqual(map["extra.intent_uri"], "intent:#Intent;end")
        XCTAssertEqual(map["extra.flag"], "true")
        XCTAssertEqual(map["extra.list"], #"[1,"a"]"#)
        XCTAssertNil(map["description"], "null removes a field")
        XCTAssertEqual(map["registration_id"], "r1,r2", "the targets are the job's tokens, never the message's")
    }

    func testTheExpirationIsTheTimeLeftAtEachSend() throws {
        let payload = #"{"notification":{"title":"T","body":"B"}}"#
        let now = XiaomiFixtures.wallMillis  // 1_767_225_600_500
        XCTAssertNil(XiaomiFixtures.fieldMap(try body(payload, expiration: nil))["time_to_live"])

        let once = XiaomiFixtures.fieldMap(try body(payload, expiration: 0))
        XCTAssertEqual(once["extra.only_send_once"], "1", "0: now or never, not kept for an offline device")
        XCTAssertNil(once["time_to_live"])

        let hour = XiaomiFixtures.fieldMap(try body(payload, expiration: 1_767_229_200, now: now))
        XCTAssertEqual(hour["time_to_live"], "3599500", "milliseconds left")
        XCTAssertNil(hour["extra.only_send_once"])

        XCTAssertEqual(XiaomiFixtures.fieldMap(try body(payload, expiration: 1_767_225_000, now: now))["time_to_live"], "1000",
                       "past: at least a second")
        XCTAssertEqual(XiaomiFixtures.fieldMap(try body(payload, expiration: .max, now: now))["time_to_live"], "864000000",
                       "at most the 10 days Xiaomi keeps a message; no overflow")
        XCTAssertEqual(XiaomiFixtures.fieldMap(try body(payload, expiration: .min + 1, now: now))["time_to_live"], "1000")
        let given = XiaomiFixtures.fieldMap(try body(#"{"notification":{"title":"T","body":"B"},"xiaomi":{"time_to_live":60000}}"#,
                                                     expiration: 1_767_229_200, now: now))
        XCTAssertEqual(given["time_to_live"], "60000", "the message's own ttl, sent once")

        // One job, sent again later: the body is cached, the ttl counted anew.
        let clock = TestWall(now)
        let service = try XiaomiFixtures.service(XiaomiFixtures.app(), wallMillis: { clock.now })
        let context = JobContext(job: XiaomiFixtures.job(payload: payload, expiration: 1_767_229_200))
        XCTAssertEqual(XiaomiFixtures.fieldMap(XiaomiFixtures.body(service, context, RequestTokens(0)))["time_to_live"], "3599500")
        let cached = context.serviceCache
        XCTAssertNotNil(cached)
        clock.now += 1000
        XCTAssertEqual(XiaomiFixtures.fieldMap(XiaomiFixtures.body(service, context, RequestTokens(1)))["time_to_live"], "3598500")
        XCTAssertTrue(context.serviceCache === cached, "the job's fields are made once")
    }

    func testTheCollapseIDHashIsStableAnd31Bits() throws {
        // FNV-1a 32-bit test vectors, the top bit cleared.
        XCTAssertEqual(CollapseNotifyID.of(""), 0x011C_9DC5)
        XCTAssertEqual(CollapseNotifyID.of("a"), 0x640C_292C)
        XCTAssertEqual(CollapseNotifyID.of("foobar"), 0x3F9C_F968)
        let payload = #"{"notification":{"title":"T","body":"B"}}"#
        let first = XiaomiFixtures.fieldMap(try body(payload, collapseID: "conversation-7"))["notify_id"]
        let again = XiaomiFixtures.fieldMap(try body(payload, tokens: ["other"], collapseID: "conversation-7"))["notify_id"]
        XCTAssertEqual(first, again)
        XCTAssertEqual(first, "894903794", "FNV-1a of the collapse id, computed independently")
        XCTAssertNotEqual(first, XiaomiFixtures.fieldMap(try body(payload, collapseID: "conversation-8"))["notify_id"])
        for text in ["x", "标题", String(repeating: "long", count: 100), "\u{0}"] {
            XCTAssertTrue((0...2_147_483_647).contains(CollapseNotifyID.of(text)))
        }
        XCTAssertEqual(XiaomiFixtures.fieldMap(try body(payload, collapseID: ""))["notify_id"], String(CollapseNotifyID.of("m1")),
                       "no collapse id: the message id's hash")
        XCTAssertEqual(MessageKey.of(messageID: "m1").count, 16)
        XCTAssertNotEqual(MessageKey.of(messageID: "m1"), MessageKey.of(messageID: "m2"))
        XCTAssertEqual(MessageKey.of(messageID: ""), "cbf29ce484222325", "FNV-1a 64's offset basis")
    }

    func testTheRegIDsAreTheRequestsTokensInItsOrderJoinedByCommas() throws {
        let tokens = ["t0", "t1", "a/b+c=", "t3", "t4", "t5"]
        let bytes = try body(#"{"notification":{"title":"T","body":"B"}}"#, tokens: tokens, request: RequestTokens(2, rest: [0, 5]))
        let text = String(decoding: bytes, as: UTF8.self)
        XCTAssertTrue(text.hasSuffix("&registration_id=a%2Fb%2Bc%3D,t0,t5"), text)
        XCTAssertEqual(XiaomiFixtures.fieldMap(bytes)["registration_id"]?.split(separator: ",").map(String.init), ["a/b+c=", "t0", "t5"])
        let one = try body(#"{"notification":{"title":"T","body":"B"}}"#, tokens: tokens, request: RequestTokens(4))
        XCTAssertTrue(String(decoding: one, as: UTF8.self).hasSuffix("&registration_id=t4"))
    }

    func testAPayloadThatIsNotJSONStillMakesAFormXiaomiWillRefuse() throws {
        let map = XiaomiFixtures.fieldMap(try body("not json"))
        XCTAssertNil(map["title"], "no guess: Xiaomi answers 10016 and the message is a dead letter with it")
        XCTAssertEqual(map["registration_id"], "r1,r2")
    }
}

/// A wall clock a test moves.
final class TestWall: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Int64
    init(_ value: Int64) { self.value = value }
    var now: Int64 {
        get { lock.withLock { value } }
        set { lock.withLock { value = newValue } }
    }
}
