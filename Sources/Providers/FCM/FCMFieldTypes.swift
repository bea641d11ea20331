import PushCore

/// The JSON types of FCM HTTP v1's message fields that the parser checks before anything is sent: a field of
/// the wrong type is refused by FCM for every token, so a message carrying one is a dead letter at once rather
/// than up to 10,000 requests answered 400 (each counted against the project's quota). Fields not listed are
/// left to FCM. From Google's reference of `Notification`, `AndroidConfig` and `AndroidNotification`.
enum FCMFieldTypes {
    enum Kind: Sendable {
        case string, bool, integer, object, stringArray

        func accepts(_ value: JSONValue) -> Bool {
            switch self {
            case .string: return value.stringValue != nil
            case .bool: return value == .bool(true) || value == .bool(false)
            case .integer: return value.exactInteger != nil
            case .object: return value.objectMembers != nil
            case .stringArray:
                guard case .array(let items) = value else { return false }
                return items.allSatisfy { $0.stringValue != nil }
            }
        }

        var description: String {
            switch self {
            case .string: return "a string"
            case .bool: return "true or false"
            case .integer: return "an integer"
            case .object: return "an object"
            case .stringArray: return "an array of strings"
            }
        }
    }

    static let notification: [String: Kind] = ["title": .string, "body": .string, "image": .string]

    static let android: [String: Kind] = [
        "collapse_key": .string, "priority": .string, "ttl": .string, "restricted_package_name": .string,
        "data": .object, "notification": .object, "fcm_options": .object, "direct_boot_ok": .bool,
    ]

    static let androidNotification: [String: Kind] = [
        "title": .string, "body": .string, "icon": .string, "color": .string, "sound": .string, "tag": .string,
        "click_action": .string, "body_loc_key": .string, "body_loc_args": .stringArray, "title_loc_key": .string,
        "title_loc_args": .stringArray, "channel_id": .string, "ticker": .string, "sticky": .bool, "event_time": .string,
        "local_only": .bool, "notification_priority": .string, "default_sound": .bool, "default_vibrate_timings": .bool,
        "default_light_settings": .bool, "vibrate_timings": .stringArray, "visibility": .string,
        "notification_count": .integer, "light_settings": .object, "image": .string,
    ]
}
