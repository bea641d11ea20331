import Foundation

/// Push Kit v3's body (HarmonyOS 5+, push-scenariozed-api-request-struct): `{"payload":{...},"target":{"token":
/// [...]},"pushOptions":{...}}` for the `push-type` header's scenario. Emulated: 0 (alert: `payload.notification`
/// with its required `category` and `clickAction`) and 6 (background: `payload.extraData`); 1..1000 tokens (10
/// for a test message), `pushOptions` types and ranges, 4096 bytes without the tokens.
enum HuaweiV3Validator {
    struct Accepted {
        var tokens: [String]
        /// `payload.notification.category`, the IM classification.
        var category: String?
    }

    static func validate(_ body: [UInt8], pushType: String?) throws -> Accepted {
        guard let pushType, let type = Int(pushType) else {
            throw HuaweiRefusal("80100001", "The push-type header is required (0 alert, 1 widget, 2 voice extension, 6 background, 7 live view, 10 call).")
        }
        guard type == 0 || type == 6 else {
            throw HuaweiRefusal("80100001", "push-type \(pushType) is not emulated (only 0 and 6).")
        }
        let root = try HuaweiJSON.parse(body, code: "80100003")
        guard let payload = try root.object("payload") else { throw HuaweiRefusal("80100003", "Illegal payload, payload is required.") }
        guard let target = try root.object("target") else { throw HuaweiRefusal("80100003", "target is required.") }
        let tokens = try target.strings("token") ?? []
        guard (1...1000).contains(tokens.count) else { throw HuaweiRefusal("80300010", "target.token holds \(tokens.count) tokens.") }
        var category: String?
        if type == 0 {
            guard let notification = try payload.object("notification") else {
                throw HuaweiRefusal("80100003", "Illegal payload, payload.notification is required for push-type 0.")
            }
            category = try checkNotification(notification)
        } else {
            guard try payload.string("extraData") != nil else {
                throw HuaweiRefusal("80100003", "Illegal payload, payload.extraData is required for push-type 6.")
            }
        }
        if let options = try root.object("pushOptions") {
            _ = try options.int("ttl", in: 0...1_296_000)
            _ = try options.int("collapseKey", in: -1...100)
            _ = try options.string("receiptId")
            if let tag = try options.string("biTag"), tag.utf8.count > 64 {
                throw HuaweiRefusal("80100001", "pushOptions.biTag is over 64 bytes.")
            }
            if try options.bool("testMessage") == true, tokens.count > 10 {
                throw HuaweiRefusal("80300030", "A test message takes at most 10 tokens.")
            }
        }
        let size = HuaweiJSON.sizeWithoutTokens(body, tokens: tokens)
        guard size <= 4096 else { throw HuaweiRefusal("80300008", "The body is \(size) bytes without its tokens.") }
        return Accepted(tokens: tokens, category: category)
    }

    /// The alert notification's fields; its `category`.
    private static func checkNotification(_ notification: HuaweiJSON) throws -> String {
        guard let category = try notification.string("category") else {
            throw HuaweiRefusal("80100003", "Illegal payload, payload.notification.category is required.")
        }
        guard HuaweiJSON.categories.contains(category) || category == "MISS_CALL" else {
            throw HuaweiRefusal("80100003", "Illegal payload, payload.notification.category \"\(category)\" is unknown.")
        }
        for name in ["title", "body"] where try notification.string(name) == nil {
            throw HuaweiRefusal("80100003", "Illegal payload, payload.notification.\(name) is required.")
        }
        for name in ["profileId", "sound", "image"] { _ = try notification.string(name) }
        _ = try notification.strings("inboxContent")
        _ = try notification.int("notifyId")
        _ = try notification.bool("foregroundShow")
        if let style = try notification.int("style"), style != 0 && style != 3 {
            throw HuaweiRefusal("80100001", "payload.notification.style must be 0 or 3.")
        }
        if let id = try notification.string("appMessageId"), !(1...64).contains(id.count) {
            throw HuaweiRefusal("80100001", "payload.notification.appMessageId must be 1 to 64 characters.")
        }
        if let badge = try notification.object("badge") {
            _ = try badge.int("addNum")
            _ = try badge.int("setNum")
        }
        guard let click = try notification.object("clickAction") else {
            throw HuaweiRefusal("80100003", "Illegal payload, payload.notification.clickAction is required.")
        }
        guard let actionType = try click.int("actionType"), [0, 1, 3, 5].contains(actionType) else {
            throw HuaweiRefusal("80100003", "Illegal payload, payload.notification.clickAction.actionType must be 0, 1, 3 or 5.")
        }
        if actionType == 1, try click.string("action") == nil && click.string("uri") == nil {
            throw HuaweiRefusal("80100001", "clickAction actionType 1 needs action or uri.")
        }
        _ = try click.object("data")
        return category
    }
}
