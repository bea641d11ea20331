import AndroidPushKit
import ProviderKit
import PushCore

/// vivo's requests for one job. One token: `POST /message/send`, the message with `regId` and `requestId`. Several
/// (2 to 1,000): the message saved once per job (`POST /message/saveListPayload`, answered with a `taskId`), then
/// `POST /message/pushToList` `{"appId","regIds","taskId","requestId","pushMode":0}` per request.
///
/// ```json
/// {"appId":10004,"category":"IM","classification":1,"clientCustomMap":{"cid":"c1"},"content":"hi","notifyId":123,
///  "notifyType":4,"regId":"<regId>","requestId":"<key>-<tokens>","skipType":1,"timeToLive":3600,"title":"Alice"}
/// ```
///
/// - `notification.title`/`body` → `title`/`content`; the click opens the app (`skipType` 1); sound and vibration
///   (`notifyType` 4); `data` → `clientCustomMap` (a map of strings).
/// - the app's class for the message's class → `classification` and `category` (upper-case, as vivo takes it).
/// - `expiration` → `timeToLive` in seconds, 60 to 86,400 (vivo's range in its newer documents; the older allowed
///   7 days: the shorter is taken); `collapse_id`, else the message id → `notifyId`.
/// - `requestId`: the message's key and a hash of the request's tokens, the same on every retry of the same
///   tokens (vivo de-duplicates by it: a timed-out push sent again is not shown twice), another for another set.
/// - the `vivo` object last, as an RFC 7396 merge patch into the message; its targets and ids are dropped.
enum VivoRequest {
    static let ttl = VendorTTL(maxSeconds: 86_400, shortestSeconds: 60)
    static let reserved: Set<String> = ["regId", "alias", "regIds", "aliases", "requestId", "taskId"]

    static func message(_ payload: AndroidPayload, app: VivoApp, classification: Int, category: String, ttlSeconds: Int64?,
                        collapseID: String?, messageID: String) -> JSONValue {
        var message = JSONValue.object([])
            .setting("appId", app.appIDValue)
            .setting("title", payload.title.map(JSONValue.string))
            .setting("content", payload.body.map(JSONValue.string))
            .setting("notifyType", .number("4"))
            .setting("skipType", .number("1"))
            .setting("timeToLive", ttlSeconds.map { .number(String($0)) })
            .setting("classification", .number(String(classification)))
            .setting("category", category.isEmpty ? nil : .string(category.uppercased()))
            .setting("clientCustomMap", payload.data)
            .setting("notifyId", .number(String(CollapseNotifyID.of(collapseID: collapseID, messageID: messageID))))
        if let vendor = payload.vendor { message = JSONMergePatch.apply(vendor, to: message) }
        return message.removing(reserved)
    }

    /// The de-duplication id of a request: the message's key and a hash of its tokens (at most 64 characters).
    static func requestID(messageID: String, tokens: [String]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for token in tokens {
            for byte in token.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
            hash = (hash ^ 0x2c) &* 0x100_0000_01b3
        }
        return "\(MessageKey.of(messageID: messageID))-\(String(hash, radix: 16))"
    }

    static func send(_ message: JSONValue, token: String, requestID: String) -> [UInt8] {
        JSONWriter.canonical(message.setting("regId", .string(token)).setting("requestId", .string(requestID)))
    }

    static func saveListPayload(_ message: JSONValue, requestID: String) -> [UInt8] {
        JSONWriter.canonical(message.setting("requestId", .string(requestID)))
    }

    static func pushToList(app: VivoApp, tokens: [String], taskID: String, requestID: String) -> [UInt8] {
        JSONWriter.canonical(.object([
            JSONMember(key: "appId", value: app.appIDValue),
            JSONMember(key: "regIds", value: .array(tokens.map(JSONValue.string))),
            JSONMember(key: "taskId", value: .string(taskID)),
            JSONMember(key: "requestId", value: .string(requestID)),
            JSONMember(key: "pushMode", value: .number("0")),
        ]))
    }
}
