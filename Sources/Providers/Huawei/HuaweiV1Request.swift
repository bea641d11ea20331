import AndroidPushKit
import ProviderKit
import PushCore

/// Push Kit v1's request (`POST /v1/<app_id>/messages:send`) for one job, without its tokens:
///
/// ```json
/// {"message":{"android":{"category":"IM","notification":{"body":"hi","click_action":{"type":3},"image":"https://…",
///   "notify_id":1234,"tag":"chat-42","title":"Alice"},"ttl":"3600s"},"data":"{\"cid\":\"c1\"}","token":[…]},
///  "validate_only":false}
/// ```
///
/// - `notification` → `android.notification` (`title`, `body`, `image`), with the click action a notification
///   requires: 3, "open the app". No notification: a data message (`message.data` alone, no `android.notification`).
/// - `data` → `message.data`, the object as a JSON string (Huawei's type for it).
/// - the app's `category` → `android.category`, on notifications only: for a data message Huawei reads `category`
///   as the high-priority pass-through right (VOIP, PLAY_VOICE), which a chat class there would not be.
/// - `expiration` → `android.ttl`, `"<seconds>s"` (`HuaweiTTL`); `collapse_id` → `notify_id` (`CollapseNotifyID`) and
///   `tag`, the collapse id itself (both replace an older notification on the device).
/// - the receipt tag (`HuaweiReceiptTag`, for an app with receipt settings) → `android.bi_tag`.
/// - the `huawei` object last, as an RFC 7396 merge patch (`JSONMergePatch`) into `message`, where nearly all of
///   v1's fields are: `{"android":{"category":"WORK","urgency":"HIGH"}}`. The request's two top-level fields can be
///   set too: `validate_only` and `review` go to the top, and a `message` object in it merges into `message` (the
///   other reading of "the fields go into the request": the object as the whole request). Targets (`token`, `topic`,
///   `condition`) are dropped: the job's tokens are the only target.
enum HuaweiV1Request {
    static let topLevelFields: Set<String> = ["validate_only", "review"]
    static let targets: Set<String> = ["token", "topic", "condition"]

    /// The document; its tokens go into `message.token` (`TokenListBody`, path `["message"]`).
    static func document(_ payload: AndroidPayload, category: String, ttlSeconds: Int64?, collapseID: String?,
                         messageID: String = "", receiptTag: String? = nil) -> JSONValue {
        var android = JSONValue.object([])
        if payload.hasNotification {
            var notification = JSONValue.object([])
                .setting("title", payload.title.map(JSONValue.string))
                .setting("body", payload.body.map(JSONValue.string))
                .setting("image", payload.image.map(JSONValue.string))
                .setting("click_action", .object([JSONMember(key: "type", value: .number("3"))]))
            if let collapseID, !collapseID.isEmpty {
                notification = notification
                    .setting("notify_id", .number(String(CollapseNotifyID.of(collapseID))))
                    .setting("tag", .string(collapseID))
            } else if !messageID.isEmpty {
                // One notification on the device however often the batch is sent.
                notification = notification.setting("notify_id", .number(String(CollapseNotifyID.of(messageID))))
            }
            android = android
                .setting("category", category.isEmpty ? nil : .string(category))
                .setting("notification", notification)
        }
        android = android.setting("ttl", ttlSeconds.map { .string("\($0)s") })
            .setting("bi_tag", receiptTag.map(JSONValue.string))
        var message = JSONValue.object([])
            .setting("data", payload.data.map { .string(String(decoding: JSONWriter.canonical($0), as: UTF8.self)) })
        if android != .object([]) { message = message.setting("android", android) }
        var root = JSONValue.object([JSONMember(key: "validate_only", value: .bool(false))])
        if let vendor = payload.vendor, case .object(let members) = vendor {
            // The request's own top-level fields, and `message` as the whole request has it; the rest is `message`'s.
            let top = members.filter { topLevelFields.contains($0.key) }
            let inner = members.filter { !topLevelFields.contains($0.key) && $0.key != "message" }
            root = JSONMergePatch.apply(.object(top), to: root)
            message = JSONMergePatch.apply(.object(inner), to: message)
            if let whole = vendor["message"], case .object = whole { message = JSONMergePatch.apply(whole, to: message) }
        }
        return root.setting("message", message.removing(targets))
    }
}
