import ProviderKit
import PushCore

/// The form fields of one job's MiPush message: everything but the targets (`registration_id`) and the ttl
/// (`time_to_live`), which each request adds (`XiaomiRequestForm`). The mapping of the common Android
/// payload (`notification {title, body, image}`, `data`, and the `xiaomi` object):
///
/// - `restricted_package_name` = the app's package; `pass_through=0` (a notification: Xiaomi has announced the
///   end of pass-through delivery); `notify_type=-1` (sound, vibration and lights, as the device allows).
/// - `title` = `notification.title`, `description` = `notification.body`; `payload` = `data` as JSON text.
/// - `notify_id` = a 31-bit hash of the collapse id (`CollapseNotifyID`), so a newer push replaces the older, or of
///   the message's id without one, so a batch sent again replaces what it showed; `extra.jobkey` = a key of the
///   message's id (`MessageKey`), the same on every retry, by which Xiaomi shows a message once.
/// - an expiration of 0 ("now or never") = `extra.only_send_once=1`, Xiaomi's "do not keep it for an offline
///   device"; a later one is the request's `time_to_live`.
/// - `extra.notify_effect=1`: a tap opens the app's launcher activity.
/// - the message's class (`MessageClass`): `extra.channel_id` = the app's channel for it (chat: the private
///   channel; system and bulk: their own, or none), and for chat where a template is configured
///   `extra.template_id` with `extra.template_param` = `{"body":…,"title":…}`, the title and body as its two
///   parameters. Without the private channel Xiaomi caps chat pushes at one per device per day.
/// - for an app with a `callback_url`, `extra.callback`, `extra.callback.type` and `extra.callback.param`: the
///   receipts (`XiaomiCallbackFields`).
/// - then every field of the `xiaomi` object as it is, last: a field it names replaces the one above (so it
///   overrides `notify_effect`, `channel_id`, `template_param`, the ttl, ...), each name is sent once (servers
///   differ on which of a repeated form field wins: a Java servlet takes the first), and a JSON `null` removes a
///   field. Strings go as they are, numbers as written, booleans as `true`/`false`, objects and arrays as
///   compact JSON text; an object named `extra` is spread into `extra.<key>` fields, as a convenience to
///   producers who nest them. `registration_id` is never taken from it: the targets are the job's tokens.
///
/// `notification.image` is not mapped: Xiaomi shows a big picture only from an image uploaded to its own media
/// API first (its `pic_url`; aggregators' docs, unverified), not from a URL. A producer that has one sets
/// `extra.notification_style_type` and `extra.notification_bigPic_uri` in the `xiaomi` object. `priority` is not
/// mapped either: Xiaomi's high priority is a right it grants per app.
///
/// The payload is the one the message parser made, so it is a JSON object of that shape. Were it not, the
/// fields hold only the defaults (no title): MiPush refuses that (10016) and the message ends as a dead letter
/// with Xiaomi's code, which is better than a guess at what was meant.
struct XiaomiMessageFields {
    /// Xiaomi refuses a title of 50 characters or more and a description of 128 or more (a CJK character counts
    /// one; Xiaomi says "under 50", "under 128"), and a blank one. For every token at once, so the message parser
    /// dead-letters them before they get here (`Malformed: ...`); kept here as the limits Xiaomi documents.
    static let maxTitleCharacters = 49
    static let maxDescriptionCharacters = 127
    /// `extra.template_param` values are 1 to 128 characters, not blank, without emoji (`\p{So}`).
    static let maxTemplateParameterCharacters = 128
    /// At most 10 custom `extra.<key>` pairs of at most 1,024 characters (65014, 65015: from third-party code).
    static let maxCustomExtras = 10
    static let maxExtraCharacters = 1024

    /// In the order they are sent; each name once.
    private(set) var fields: [(name: String, value: String)] = []

    /// `callbackURL`: where the app's receipts go (`XiaomiCallbackFields`), nil for an app without a `callback_url`.
    init(payload: [UInt8], headers: PushHeaders, app: XiaomiApp, messageClass: MessageClass = .chat, messageID: String = "",
         callbackURL: String? = nil) {
        let message = try? JSONParser.parse(payload, maxDepth: 32)
        let notification = message?["notification"]
        let title = notification?["title"]?.stringValue
        let body = notification?["body"]?.stringValue
        set("restricted_package_name", app.package)
        set("pass_through", "0")
        set("notify_type", "-1")
        set("title", title)
        set("description", body)
        if let data = message?["data"], data.objectMembers != nil { set("payload", Self.text(data)) }
        if let collapseID = headers.collapseID, !collapseID.isEmpty {
            set("notify_id", String(CollapseNotifyID.of(collapseID)))
        } else if !messageID.isEmpty {
            set("notify_id", String(CollapseNotifyID.of(messageID)))
        }
        if headers.expiration == 0 { set("extra.only_send_once", "1") }
        set("extra.notify_effect", "1")
        // Xiaomi shows a message once per jobkey: a batch sent twice (a timeout after it was written) is shown once.
        if !messageID.isEmpty { set("extra.jobkey", MessageKey.of(messageID: messageID)) }
        let channel = app.channelID(for: messageClass)
        if !channel.isEmpty { set("extra.channel_id", channel) }
        if messageClass == .chat && !app.templateID.isEmpty {
            set("extra.template_id", app.templateID)
            let parameters = JSONValue.object([JSONMember(key: "body", value: .string(body ?? "")),
                                               JSONMember(key: "title", value: .string(title ?? ""))])
            set("extra.template_param", Self.text(parameters))
        }
        if let callbackURL {
            for field in XiaomiCallbackFields.fields(callbackURL: callbackURL, messageID: messageID) { set(field.name, field.value) }
        }
        for member in message?["xiaomi"]?.objectMembers ?? [] {
            if member.key == "extra", let extras = member.value.objectMembers {
                for extra in extras where !extra.key.isEmpty { set("extra." + extra.key, Self.text(extra.value)) }
            } else if !member.key.isEmpty {
                set(member.key, Self.text(member.value))
            }
        }
        set("registration_id", nil)
    }

    /// The value of `name`, if it is sent.
    func value(_ name: String) -> String? { fields.first { $0.name == name }?.value }

    /// Sets `name` to `value` in its place, or appends it; nil removes it.
    mutating func set(_ name: String, _ value: String?) {
        if let index = fields.firstIndex(where: { $0.name == name }) {
            if let value { fields[index].value = value } else { fields.remove(at: index) }
        } else if let value {
            fields.append((name, value))
        }
    }

    /// A JSON value as a form field's text; nil for `null` (the field is removed).
    static func text(_ value: JSONValue) -> String? {
        switch value {
        case .null: return nil
        case .string(let text): return text
        case .number(let literal): return literal
        case .bool(let flag): return flag ? "true" : "false"
        case .array, .object: return String(decoding: JSONWriter.canonical(value), as: UTF8.self)
        }
    }
}
