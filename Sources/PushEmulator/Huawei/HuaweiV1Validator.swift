import Foundation

/// Push Kit v1's `messages:send` body, checked as Huawei documents it (HMSCore-References https-send-api):
/// `{"validate_only": bool, "message": {...}, "review": [...]}` with exactly one target, 1..1000 tokens, the
/// field types, the enumerations (`category`, `urgency`, `importance`, `click_action.type`, `style`), `ttl` at
/// most 15 days, `collapse_key` -1..100, the click action a notification requires, and 4096 bytes without the
/// tokens. Unknown fields are ignored (Huawei documents no refusal for them).
enum HuaweiV1Validator {
    struct Accepted {
        var tokens: [String]
        var validateOnly: Bool
        /// `android.category`, the IM classification.
        var category: String?
        /// `android.urgency` HIGH (needs a granted right).
        var urgencyHigh: Bool
    }

    static let maxTTLSeconds: Double = 1_296_000

    static func validate(_ body: [UInt8]) throws -> Accepted {
        let root = try HuaweiJSON.parse(body, code: "80100003")
        let validateOnly = try root.bool("validate_only") ?? false
        _ = try root.array("review")
        guard let message = try root.object("message") else { throw HuaweiRefusal("80100003", "message is required.") }
        let targets = ["token", "topic", "condition"].filter { message.has($0) }
        guard targets.count == 1 else {
            throw HuaweiRefusal("80100003", "Exactly one of message.token, message.topic and message.condition must be set.")
        }
        guard targets[0] == "token" else {
            throw HuaweiRefusal("80100001", "message.\(targets[0]): only token sends are emulated.")
        }
        let tokens = try message.strings("token") ?? []
        guard (1...1000).contains(tokens.count) else {
            throw HuaweiRefusal("80300010", "message.token holds \(tokens.count) tokens.")
        }
        let data = try message.string("data")
        let notification = try message.object("notification")
        if let notification {
            _ = try notification.string("title")
            _ = try notification.string("body")
            try checkHTTPS(notification, "image")
        }
        let android = try message.object("android")
        var category: String?
        var urgencyHigh = false
        var hasAndroidNotification = false
        var androidData: String?
        if let android {
            _ = try android.int("collapse_key", in: -1...100, code: "80100013")
            urgencyHigh = try android.string("urgency", oneOf: ["HIGH", "NORMAL"]) == "HIGH"
            category = try android.string("category", oneOf: HuaweiJSON.categories)
            if let ttl = try android.string("ttl") {
                guard let seconds = ttlSeconds(ttl) else {
                    throw HuaweiRefusal("80100001", "message.android.ttl \"\(ttl)\" is not a duration in seconds such as \"86400s\".")
                }
                guard seconds <= maxTTLSeconds else {
                    throw HuaweiRefusal("80100001", "message.android.ttl \"\(ttl)\" is over 1296000s (15 days).")
                }
            }
            for name in ["bi_tag", "receipt_id"] { _ = try android.string(name) }
            androidData = try android.string("data")
            _ = try android.int("target_user_type", in: 0...1)
            _ = try android.int("fast_app_target", in: 1...2)
            if let androidNotification = try android.object("notification") {
                hasAndroidNotification = true
                try checkAndroidNotification(androidNotification, message: notification)
            }
        }
        if notification != nil && !hasAndroidNotification {
            // A notification for Android needs android.notification with its (required) click_action.
            throw HuaweiRefusal("80100003", "message.android.notification.click_action is required for a notification message.")
        }
        if !hasAndroidNotification && (data ?? androidData ?? "").isEmpty {
            throw HuaweiRefusal("80100003", "The message has no payload: set a notification or data.")
        }
        let size = HuaweiJSON.sizeWithoutTokens(body, tokens: tokens)
        guard size <= 4096 else { throw HuaweiRefusal("80300008", "The body is \(size) bytes without its tokens.") }
        return Accepted(tokens: tokens, validateOnly: validateOnly, category: category, urgencyHigh: urgencyHigh)
    }

    private static func checkAndroidNotification(_ notification: HuaweiJSON, message: HuaweiJSON?) throws {
        for name in ["title", "body"] {
            let own = try notification.string(name)
            let common = try message?.string(name)
            guard own != nil || common != nil else {
                throw HuaweiRefusal("80100001", "message.android.notification.\(name) or message.notification.\(name) is required.")
            }
        }
        for name in ["tag", "group", "channel_id", "sound", "icon", "color", "notify_summary", "big_title", "big_body", "profile_id"] {
            _ = try notification.string(name)
        }
        try checkHTTPS(notification, "image")
        _ = try notification.string("importance", oneOf: ["LOW", "NORMAL"])
        _ = try notification.int("notify_id")
        _ = try notification.bool("foreground_show")
        if let style = try notification.int("style") {
            guard [0, 1, 3].contains(style) else { throw HuaweiRefusal("80100001", "message.android.notification.style must be 0, 1 or 3.") }
            if style == 1, try notification.string("big_title") == nil || notification.string("big_body") == nil {
                throw HuaweiRefusal("80100001", "style 1 needs message.android.notification.big_title and big_body.")
            }
            if style == 3 {
                let inbox = try notification.strings("inbox_content") ?? []
                guard (1...5).contains(inbox.count) else {
                    throw HuaweiRefusal("80100001", "style 3 needs 1 to 5 message.android.notification.inbox_content lines.")
                }
            }
        }
        if let badge = try notification.object("badge") {
            _ = try badge.int("add_num", in: 1...99)
            _ = try badge.int("set_num", in: 0...99)
            _ = try badge.string("class")
        }
        guard let click = try notification.object("click_action") else {
            throw HuaweiRefusal("80100003", "message.android.notification.click_action is required.")
        }
        guard let type = try click.int("type") else {
            throw HuaweiRefusal("80100003", "message.android.notification.click_action.type is required.")
        }
        switch type {
        case 1:
            guard try click.string("intent") != nil || click.string("action") != nil else {
                throw HuaweiRefusal("80100001", "click_action type 1 needs intent or action.")
            }
        case 2:
            guard let url = try click.string("url"), url.hasPrefix("https://") else {
                throw HuaweiRefusal("80100001", "click_action type 2 needs an https url.")
            }
        case 3: break
        default: throw HuaweiRefusal("80100001", "message.android.notification.click_action.type must be 1, 2 or 3, got \(type).")
        }
    }

    private static func checkHTTPS(_ object: HuaweiJSON, _ name: String) throws {
        if let url = try object.string(name), !url.hasPrefix("https://") {
            throw HuaweiRefusal("80100001", "\(object.named(name)) must be an https URL.")
        }
    }

    /// Huawei's ttl: seconds with up to nine decimals, with or without a trailing `s` ("86400s", "3.5").
    static func ttlSeconds(_ text: String) -> Double? {
        var number = Substring(text)
        if number.hasSuffix("s") || number.hasSuffix("S") { number = number.dropLast() }
        let parts = number.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard let whole = parts.first, !whole.isEmpty, whole.count <= 12, whole.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        if parts.count == 2 {
            guard (1...9).contains(parts[1].count), parts[1].allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        }
        return Double(number)
    }
}
