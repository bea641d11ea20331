import AndroidPushKit
import ProviderKit
import PushCore

/// Push Kit v3's request (`POST /v3/<project_id>/messages:send`, header `push-type: 0`, an alert) for one job,
/// without its tokens:
///
/// ```json
/// {"payload":{"notification":{"body":"hi","category":"IM","clickAction":{"actionType":0,"data":{"cid":"c1"}},
///   "image":"https://…","notifyId":1234,"title":"Alice"}},"pushOptions":{"ttl":3600},"target":{"token":[…]}}
/// ```
///
/// - `notification` → `payload.notification` (`title`, `body`, `image`) with the required `category` (the app's)
///   and the required click action: `actionType` 0, "open the app".
/// - `data` → `clickAction.data`, the object as it is (v3 hands the app a map).
/// - `expiration` → `pushOptions.ttl` in seconds (`HuaweiTTL`); `collapse_id` → `notifyId` (`CollapseNotifyID`).
/// - the receipt tag (`HuaweiReceiptTag`, for an app with receipt settings) → `pushOptions.biTag`.
/// - the `huawei` object last, as an RFC 7396 merge patch (`JSONMergePatch`) into the whole request:
///   `{"payload":{"notification":{"category":"WORK"}},"pushOptions":{"biTag":"m-1"}}`. `target` is dropped: the
///   job's tokens are the only target.
///
/// Every v3 request is push-type 0: the scheduler shares a header block between jobs with the same push headers,
/// so a header that differs by payload (a data message as push-type 6) would reach the wrong jobs. A payload without
/// a title and body is therefore sent as an alert all the same, and Huawei's refusal (80100003) dead-letters it.
enum HuaweiV3Request {
    static let pushType = "0"

    /// The document; its tokens go into `target.token` (`TokenListBody`, path `["target"]`).
    static func document(_ payload: AndroidPayload, category: String, ttlSeconds: Int64?, collapseID: String?,
                         messageID: String = "", receiptTag: String? = nil) -> JSONValue {
        let click = JSONValue.object([JSONMember(key: "actionType", value: .number("0"))]).setting("data", payload.data)
        let notification = JSONValue.object([])
            .setting("category", category.isEmpty ? nil : .string(category))
            .setting("title", payload.title.map(JSONValue.string))
            .setting("body", payload.body.map(JSONValue.string))
            .setting("image", payload.image.map(JSONValue.string))
            .setting("notifyId", collapseID == nil && messageID.isEmpty ? nil
                     : .number(String(CollapseNotifyID.of(collapseID: collapseID, messageID: messageID))))
            .setting("clickAction", click)
        var root = JSONValue.object([JSONMember(key: "payload", value: .object([JSONMember(key: "notification", value: notification)]))])
        let pushOptions = JSONValue.object([])
            .setting("ttl", ttlSeconds.map { .number(String($0)) })
            .setting("biTag", receiptTag.map(JSONValue.string))
        if pushOptions != .object([]) { root = root.setting("pushOptions", pushOptions) }
        if let vendor = payload.vendor { root = JSONMergePatch.apply(vendor, to: root) }
        return root.removing(["target"])
    }
}
