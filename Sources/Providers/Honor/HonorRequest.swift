import AndroidPushKit
import ProviderKit
import PushCore

/// Honor's request (`POST /api/v1/<appId>/sendMessage`) for one job, without its tokens, the token list at the top:
///
/// ```json
/// {"android":{"notification":{"body":"hi","clickAction":{"type":3},"importance":"NORMAL","notifyId":1234,
///   "title":"Alice"},"ttl":"3600s"},"data":"{\"cid\":\"c1\"}","token":[…]}
/// ```
///
/// - `notification` → `android.notification` (`title`, `body`, `image`), with the click action Honor requires: 3,
///   "open the app". No notification: a data message (`data` alone).
/// - `data` → `data`, the object as a JSON string (Honor's type for it).
/// - the app's importance for the message's class → `android.notification.importance` (notifications only).
/// - `expiration` → `android.ttl`, `"<seconds>s"`, at most 15 days (`HonorRequest.ttl`); `collapse_id`, else the
///   message id → `notifyId` (`CollapseNotifyID`: the same notification replaced, never shown twice), and the
///   collapse id as `tag`.
/// - the `honor` object last, as an RFC 7396 merge patch (`JSONMergePatch`) into the whole request:
///   `{"android":{"targetUserType":1}}`. A `token` in it is dropped: the job's tokens are the only target.
enum HonorRequest {
    /// Honor's longest ttl, 15 days; no minimum is documented.
    static let ttl = VendorTTL(maxSeconds: 1_296_000)

    static func document(_ payload: AndroidPayload, importance: String, ttlSeconds: Int64?, collapseID: String?,
                         messageID: String) -> JSONValue {
        var android = JSONValue.object([])
        if payload.hasNotification {
            var notification = JSONValue.object([])
                .setting("title", payload.title.map(JSONValue.string))
                .setting("body", payload.body.map(JSONValue.string))
                .setting("image", payload.image.map(JSONValue.string))
                .setting("clickAction", .object([JSONMember(key: "type", value: .number("3"))]))
                .setting("importance", importance.isEmpty ? nil : .string(importance))
                .setting("notifyId", .number(String(CollapseNotifyID.of(collapseID: collapseID, messageID: messageID))))
            if let collapseID, !collapseID.isEmpty { notification = notification.setting("tag", .string(collapseID)) }
            android = android.setting("notification", notification)
        }
        android = android.setting("ttl", ttlSeconds.map { .string("\($0)s") })
        var root = JSONValue.object([])
            .setting("data", payload.data.map { .string(String(decoding: JSONWriter.canonical($0), as: UTF8.self)) })
        if android != .object([]) { root = root.setting("android", android) }
        if let vendor = payload.vendor { root = JSONMergePatch.apply(vendor, to: root) }
        return root.removing(["token"])
    }
}
