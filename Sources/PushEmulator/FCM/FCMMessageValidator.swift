import Foundation

/// Checks a `messages:send` body as FCM HTTP v1 does: `{"message": {...}, "validate_only": bool}` whose message
/// names exactly one target, with string `data` values, object `notification`/`data`/`android`, `android`
/// fields of the right form, no unknown fields, and a payload of at most 4,096 bytes. Field names are accepted in
/// both spellings proto JSON allows (`collapse_key` and `collapseKey`). Google's wording where it is known.
public struct FCMMessageValidator: Sendable {
    /// What passed.
    public struct Accepted: Sendable, Equatable {
        public var token: String
        public var validateOnly: Bool
    }

    /// FCM's limit for messages to a token; keys and values counted (see `payloadSize`).
    public static let maxPayloadBytes = 4096
    /// `android.ttl`: 0 to 4 weeks.
    static let maxTTLSeconds: Double = 2_419_200

    static let messageFields: Set<String> = ["name", "data", "notification", "android", "apns", "webpush", "fcm_options",
                                             "token", "topic", "condition"]
    static let notificationFields: Set<String> = ["title", "body", "image"]
    static let androidFields: Set<String> = ["collapse_key", "priority", "ttl", "restricted_package_name", "data", "notification",
                                             "fcm_options", "direct_boot_ok", "bandwidth_constrained_ok", "restricted_satellite_ok"]
    static let androidNotificationFields: Set<String> = [
        "title", "body", "icon", "color", "sound", "tag", "click_action", "body_loc_key", "body_loc_args", "title_loc_key",
        "title_loc_args", "channel_id", "ticker", "sticky", "event_time", "local_only", "notification_priority", "default_sound",
        "default_vibrate_timings", "default_light_settings", "vibrate_timings", "visibility", "notification_count",
        "light_settings", "image", "bypass_proxy_notification", "proxy",
    ]
    static let androidPriorities: Set<String> = ["high", "normal", "HIGH", "NORMAL"]
    /// `android.notification`'s fields by proto type (Google's AndroidNotification reference).
    static let androidNotificationStrings: Set<String> = [
        "title", "body", "icon", "color", "sound", "tag", "click_action", "body_loc_key", "title_loc_key", "channel_id", "ticker",
        "event_time", "notification_priority", "visibility", "image", "proxy",
    ]
    static let androidNotificationBools: Set<String> = [
        "sticky", "local_only", "default_sound", "default_vibrate_timings", "default_light_settings", "bypass_proxy_notification",
    ]
    static let androidNotificationStringLists: Set<String> = ["body_loc_args", "title_loc_args", "vibrate_timings"]

    public init() {}

    public func validate(_ body: [UInt8]) -> Result<Accepted, FCMError> {
        do { return .success(try check(body)) } catch let error as FCMError { return .failure(error) } catch {
            return .failure(.invalidArgument("Request contains an invalid argument."))
        }
    }

    private func check(_ body: [UInt8]) throws -> Accepted {
        guard let request = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] else {
            throw FCMError.invalidArgument("Invalid JSON payload received. Unexpected token.")
        }
        for key in request.keys where !["message", "validate_only"].contains(Self.snake(key)) {
            throw FCMError.invalidArgument("Invalid JSON payload received. Unknown name \"\(key)\": Cannot find field.", field: key)
        }
        var validateOnly = false
        if let flag = value(request, "validate_only") {
            guard let bool = flag as? Bool else { throw typeError("validate_only", "TYPE_BOOL", flag) }
            validateOnly = bool
        }
        guard let messageValue = value(request, "message") else {
            throw FCMError.invalidArgument("Request contains an invalid argument.", field: "message")
        }
        guard let message = messageValue as? [String: Any] else { throw typeError("message", "TYPE_MESSAGE", messageValue) }
        try onlyKnownFields(message, Self.messageFields, at: "message")

        let targets = ["token", "topic", "condition"].filter { value(message, $0) != nil }
        guard let target = targets.first else {
            throw FCMError.invalidArgument("Recipient of the message is not set.", field: "message")
        }
        if targets.count > 1 {
            throw FCMError.invalidArgument("Invalid value at 'message' (oneof), oneof field 'target' is already set. Cannot set '\(targets[1])'",
                                           field: "message")
        }
        guard target == "token" else {
            throw FCMError.invalidArgument("The emulator sends to registration tokens only: '\(target)' messages are not supported.",
                                           field: "message.\(target)")
        }
        let tokenValue = value(message, "token")!
        guard let token = tokenValue as? String else { throw typeError("message.token", "TYPE_STRING", tokenValue) }
        guard Self.isWellFormedToken(token) else { throw FCMError.invalidRegistrationToken }

        if let name = value(message, "name"), !(name is String) { throw typeError("message.name", "TYPE_STRING", name) }
        if let data = value(message, "data") { try checkData(data, at: "message.data") }
        if let notification = value(message, "notification") {
            let object = try object(notification, at: "message.notification")
            try onlyKnownFields(object, Self.notificationFields, at: "message.notification")
            for (key, field) in object where !(field is String) { throw typeError("message.notification.\(key)", "TYPE_STRING", field) }
        }
        if let android = value(message, "android") { try checkAndroid(android) }
        if let apns = value(message, "apns") {
            let config = try object(apns, at: "message.apns")
            try onlyKnownFields(config, ["headers", "payload", "fcm_options", "live_activity_token"], at: "message.apns")
            if let headers = value(config, "headers") { try checkStringMap(headers, at: "message.apns.headers") }
            if let payload = value(config, "payload") { _ = try object(payload, at: "message.apns.payload") }
        }
        if let webpush = value(message, "webpush") {
            let config = try object(webpush, at: "message.webpush")
            try onlyKnownFields(config, ["headers", "data", "notification", "fcm_options"], at: "message.webpush")
            for name in ["headers", "data"] {
                if let map = value(config, name) { try checkStringMap(map, at: "message.webpush.\(name)") }
            }
            if let notification = value(config, "notification") { _ = try object(notification, at: "message.webpush.notification") }
        }
        if let options = value(message, "fcm_options") {
            let object = try object(options, at: "message.fcm_options")
            try onlyKnownFields(object, ["analytics_label"], at: "message.fcm_options")
            if let label = value(object, "analytics_label"), !(label is String) {
                throw typeError("message.fcm_options.analytics_label", "TYPE_STRING", label)
            }
        }

        let size = Self.payloadSize(message)
        guard size <= Self.maxPayloadBytes else {
            throw FCMError.invalidArgument("Android message is too big (\(size) bytes of keys and values; at most \(Self.maxPayloadBytes))",
                                           field: "message")
        }
        return Accepted(token: token, validateOnly: validateOnly)
    }

    private func checkAndroid(_ android: Any) throws {
        let config = try object(android, at: "message.android")
        try onlyKnownFields(config, Self.androidFields, at: "message.android")
        if let priority = value(config, "priority") {
            guard let text = priority as? String, Self.androidPriorities.contains(text) else {
                throw typeError("message.android.priority", "type.googleapis.com/google.firebase.fcm.v1.AndroidMessagePriority", priority)
            }
        }
        if let ttl = value(config, "ttl") {
            guard let text = ttl as? String, let seconds = Self.durationSeconds(text) else {
                throw typeError("message.android.ttl", "type.googleapis.com/google.protobuf.Duration", ttl)
            }
            guard seconds <= Self.maxTTLSeconds else {
                throw FCMError.invalidArgument("TTL must be between 0 seconds and 4 weeks (2419200s): \(text)", field: "message.android.ttl")
            }
        }
        for name in ["collapse_key", "restricted_package_name"] {
            if let field = value(config, name), !(field is String) { throw typeError("message.android.\(name)", "TYPE_STRING", field) }
        }
        for name in ["direct_boot_ok", "bandwidth_constrained_ok", "restricted_satellite_ok"] {
            if let field = value(config, name), !(field is Bool) { throw typeError("message.android.\(name)", "TYPE_BOOL", field) }
        }
        if let data = value(config, "data") { try checkData(data, at: "message.android.data") }
        if let notification = value(config, "notification") {
            let object = try object(notification, at: "message.android.notification")
            try onlyKnownFields(object, Self.androidNotificationFields, at: "message.android.notification")
            try checkAndroidNotificationTypes(object)
        }
        if let options = value(config, "fcm_options") { _ = try object(options, at: "message.android.fcm_options") }
    }

    /// The proto types of `android.notification`'s fields: FCM refuses a wrong one for every token.
    private func checkAndroidNotificationTypes(_ notification: [String: Any]) throws {
        for (key, field) in notification {
            let name = Self.snake(key)
            let path = "message.android.notification.\(name)"
            if Self.androidNotificationStrings.contains(name), !(field is String) { throw typeError(path, "TYPE_STRING", field) }
            if Self.androidNotificationBools.contains(name), !JSONNumber.isBool(field) { throw typeError(path, "TYPE_BOOL", field) }
            if Self.androidNotificationStringLists.contains(name), !((field as? [Any])?.allSatisfy { $0 is String } ?? false) {
                throw typeError(path, "TYPE_STRING (repeated)", field)
            }
            if name == "notification_count", !JSONNumber.isInteger(field) { throw typeError(path, "TYPE_INT32", field) }
        }
    }

    /// A map of string to string (headers).
    private func checkStringMap(_ map: Any, at path: String) throws {
        for (key, field) in try object(map, at: path) where !(field is String) { throw typeError("\(path).\(key)", "TYPE_STRING", field) }
    }

    /// A map of string to string, without the keys FCM reserves.
    private func checkData(_ data: Any, at path: String) throws {
        let map = try object(data, at: path)
        for (index, key) in map.keys.sorted().enumerated() {
            guard map[key] is String else { throw typeError("\(path)[\(index)].value", "TYPE_STRING", map[key] as Any) }
            if key == "from" || key == "gcm" || key.hasPrefix("google") {
                throw FCMError.invalidArgument("Invalid data payload key: \(key) (reserved)", field: "\(path)[\(index)].key")
            }
        }
    }

    private func object(_ value: Any, at path: String) throws -> [String: Any] {
        guard let object = value as? [String: Any] else { throw typeError(path, "TYPE_MESSAGE", value) }
        return object
    }

    private func onlyKnownFields(_ object: [String: Any], _ known: Set<String>, at path: String) throws {
        for key in object.keys.sorted() where !known.contains(Self.snake(key)) {
            throw FCMError.invalidArgument("Invalid JSON payload received. Unknown name \"\(key)\" at '\(path)': Cannot find field.",
                                           field: path)
        }
    }

    private func typeError(_ path: String, _ type: String, _ value: Any) -> FCMError {
        FCMError.invalidArgument("Invalid value at '\(path)' (\(type)), \(Self.shortText(value))", field: path)
    }

    /// A field by either spelling (`collapse_key` or `collapseKey`); JSON null counts as absent, as in proto JSON.
    private func value(_ object: [String: Any], _ snakeName: String) -> Any? {
        let found = object[snakeName] ?? object[Self.camel(snakeName)]
        return found is NSNull ? nil : found
    }

    // MARK: Forms

    /// Registration tokens are 1..4,096 bytes of `A-Z a-z 0-9 _ - : .` (the worker checks the same; FCM's are
    /// about 160 of them).
    public static func isWellFormedToken(_ token: String) -> Bool {
        guard !token.isEmpty, token.utf8.count <= 4096 else { return false }
        return token.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x61 && byte <= 0x7a)
                || byte == 0x5f || byte == 0x2d || byte == 0x3a || byte == 0x2e
        }
    }

    /// A google.protobuf.Duration in JSON: seconds with up to nine decimals and an `s` ("3.5s", "0s").
    static func durationSeconds(_ text: String) -> Double? {
        guard text.hasSuffix("s") else { return nil }
        let number = text.dropLast()
        let parts = number.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard let whole = parts.first, !whole.isEmpty, whole.count <= 12, whole.allSatisfy(\.isASCIIDigit) else { return nil }
        if parts.count == 2 {
            guard !parts[1].isEmpty, parts[1].count <= 9, parts[1].allSatisfy(\.isASCIIDigit) else { return nil }
        }
        return Double(number)
    }

    /// The payload's size as FCM counts it: the bytes of every key and value, the target excepted. No
    /// serialization's quoting or spacing is counted, so a payload a sender measured at 4,096 bytes in any
    /// compact form is never refused here.
    static func payloadSize(_ message: [String: Any]) -> Int {
        func size(_ value: Any) -> Int {
            switch value {
            case let text as String: return text.utf8.count
            case let object as [String: Any]: return object.reduce(0) { $0 + $1.key.utf8.count + size($1.value) }
            case let array as [Any]: return array.reduce(0) { $0 + size($1) }
            case is NSNull: return 0
            default: return "\(value)".utf8.count
            }
        }
        return message.reduce(0) { total, field in
            ["token", "topic", "condition"].contains(field.key) ? total : total + field.key.utf8.count + size(field.value)
        }
    }

    static func snake(_ name: String) -> String {
        var out = ""
        for character in name {
            if character.isUppercase {
                out += "_" + character.lowercased()
            } else {
                out.append(character)
            }
        }
        return out
    }

    static func camel(_ snakeName: String) -> String {
        let parts = snakeName.split(separator: "_")
        guard let first = parts.first else { return snakeName }
        return String(first) + parts.dropFirst().map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
    }

    private static func shortText(_ value: Any) -> String {
        let text: String
        switch value {
        case let string as String: text = "\"\(string)\""
        case is [String: Any]: text = "{...}"
        case is [Any]: text = "[...]"
        default: text = "\(value)"
        }
        return text.count > 40 ? String(text.prefix(40)) + "..." : text
    }
}

private extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}
