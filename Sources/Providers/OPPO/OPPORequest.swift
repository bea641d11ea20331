import AndroidPushKit
import ProviderKit
import PushCore

/// OPPO's messages for one job. One token: `unicast`, the form field `message`, one JSON object; several:
/// `unicast_batch`, the form field `messages`, a JSON array of up to 1,000 such objects, each with its own target
/// and the job's notification (OPPO answers each with its own code). Each form also carries `auth_token`.
///
/// ```json
/// {"notification":{"action_parameters":"{\"cid\":\"c1\"}","app_message_id":"m-123","category":"IM",
///   "click_action_type":0,"content":"hi","notify_id":1234,"notify_level":2,"off_line":true,"off_line_ttl":3600,
///   "title":"Alice"},"target_type":2,"target_value":"<regId>"}
/// ```
///
/// - `notification.title`/`body` → `title`/`content`; `image` is not mapped (OPPO's pictures are uploaded ids).
/// - `data` → `action_parameters`, the object as a JSON string; the click opens the app (`click_action_type` 0).
/// - the app's class for the message's class → `category`, `notify_level` (only with a category) and `channel_id`.
/// - `expiration` → `off_line_ttl` in seconds, at most 10 days; `collapse_id`, else the message id →
///   `notify_id`; the message id → `app_message_id` (OPPO sends a message id once per target: a retry is never
///   shown twice).
/// - the `oppo` object last, as an RFC 7396 merge patch into each message object; its targets are dropped.
enum OPPORequest {
    static let ttl = VendorTTL(maxSeconds: 864_000)

    /// The message object without its target: `target_type` 2 (a regId) and the notification.
    static func item(_ payload: AndroidPayload, category: String, notifyLevel: Int, channelID: String, ttlSeconds: Int64?,
                     collapseID: String?, messageID: String) -> JSONValue {
        var notification = JSONValue.object([])
            .setting("title", payload.title.map(JSONValue.string))
            .setting("content", payload.body.map(JSONValue.string))
            .setting("click_action_type", .number("0"))
            .setting("action_parameters", payload.data.map { .string(String(decoding: JSONWriter.canonical($0), as: UTF8.self)) })
            .setting("off_line", .bool(true))
            .setting("off_line_ttl", ttlSeconds.map { .number(String($0)) })
            .setting("notify_id", .number(String(CollapseNotifyID.of(collapseID: collapseID, messageID: messageID))))
            .setting("app_message_id", .string(MessageKey.of(messageID: messageID)))
            .setting("channel_id", channelID.isEmpty ? nil : .string(channelID))
        if !category.isEmpty {
            notification = notification.setting("category", .string(category))
                .setting("notify_level", notifyLevel > 0 ? .number(String(notifyLevel)) : nil)
        }
        var item = JSONValue.object([JSONMember(key: "notification", value: notification),
                                     JSONMember(key: "target_type", value: .number("2"))])
        if let vendor = payload.vendor { item = JSONMergePatch.apply(vendor, to: item) }
        return item.removing(["target_value"]).setting("target_type", .number("2"))
    }

    /// The form for `tokens`: `message` for one, `messages` for several, and `auth_token`.
    static func form(item: ItemBody, tokens: [String], authToken: String) -> [UInt8] {
        let json: [UInt8]
        let field: String
        if tokens.count == 1 {
            field = "message"
            json = item.body(tokens: tokens)
        } else {
            field = "messages"
            var list: [UInt8] = [UInt8(ascii: "[")]
            for (position, token) in tokens.enumerated() {
                if position > 0 { list.append(UInt8(ascii: ",")) }
                list += item.body(tokens: [token])
            }
            list.append(UInt8(ascii: "]"))
            json = list
        }
        var form: [UInt8] = []
        form.reserveCapacity(json.count * 2 + 64)
        FormEncoding.appendField("auth_token", authToken, to: &form)
        form += Array("&\(field)=".utf8)
        FormEncoding.append(bytes: json, to: &form)
        return form
    }

    /// A message object with its `target_value` spliced in (its prefix and suffix made once per job).
    struct ItemBody {
        let prefix: [UInt8]
        let suffix: [UInt8]

        init(_ item: JSONValue) {
            // `target_value` goes in as the last member (the target was dropped from the object above).
            var written = JSONWriter.canonical(item)
            written.removeLast()  // the closing brace
            prefix = written + Array(#","target_value":"#.utf8)
            suffix = [UInt8(ascii: "}")]
        }

        func body(tokens: [String]) -> [UInt8] {
            var out = prefix
            JSONWriter.writeString(tokens.first ?? "", into: &out)
            return out + suffix
        }
    }
}
