import Foundation

/// The form fields of a Xiaomi regId send (`/v3/message/regid`), checked as MiPush documents them: 1..1000
/// comma-separated `registration_id`s, `restricted_package_name` among the app's packages, `pass_through` 0|1,
/// `notify_type` -1..7, `title` under 50 and `description` under 128 characters (a CJK character counts one),
/// not blank, for notifications; `time_to_live` and `notify_id` ranges; at most 10 custom `extra.*` pairs of
/// at most 1024 characters (65014/65015, from third-party code); `extra.jobkey` at most 20 characters;
/// `extra.channel_id` among the app's channels (27001); a template's `extra.template_param`.
enum XiaomiMessageValidator {
    struct Accepted {
        var regIDs: [String]
        var channel: String?
    }

    struct Refusal: Error {
        let answer: XiaomiAnswer
        init(_ code: Int, _ reason: String) { answer = .error(code, reason) }
    }

    /// `extra.*` keys MiPush defines; others are custom pairs passed to the app.
    static let knownExtras: Set<String> = [
        "channel_id", "channel_name", "template_id", "template_param", "notify_effect", "intent_uri", "web_uri",
        "jobkey", "only_send_once", "callback", "callback.param", "callback.type", "notify_foreground", "sound_uri",
        "ticker", "locale", "locale_not_in", "model", "model_not_in", "app_version", "app_version_not_in",
        "connpt", "flow_control", "layout_name", "layout_value", "notification_style_type",
        "notification_bigPic_uri", "notification_large_icon_uri", "notification_small_icon_uri", "show_type",
    ]

    static func validate(_ form: [String: String], app: EmulatorConfiguration.XiaomiApp) throws -> Accepted {
        guard let list = form["registration_id"], !list.isEmpty else { throw Refusal(10016, "Missing required parameter: registration_id.") }
        let regIDs = list.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        guard regIDs.count <= 1000 else { throw Refusal(10017, "registration_id holds \(regIDs.count) regIds, at most 1000.") }
        guard !regIDs.contains(where: \.isEmpty) else { throw Refusal(10017, "registration_id holds an empty regId.") }
        if let packages = form["restricted_package_name"] {
            for package in packages.split(separator: ",", omittingEmptySubsequences: false) where !app.packages.contains(String(package)) {
                throw Refusal(22022, "restricted_package_name \(package) is not a package of this app.")
            }
        }
        let passThrough = try integer(form, "pass_through", in: 0...1) ?? 0
        _ = try integer(form, "notify_type", in: -1...7)
        _ = try integer(form, "notify_id", in: 0...2_147_483_647)
        _ = try integer(form, "time_to_live", in: 0...Int.max)
        _ = try integer(form, "time_to_send", in: 0...Int.max)
        if passThrough == 0 {
            for (name, limit) in [("title", 50), ("description", 128)] {
                guard let text = form[name], !text.isEmpty else { throw Refusal(10016, "Missing required parameter: \(name).") }
                guard text.count < limit else { throw Refusal(10017, "\(name) is \(text.count) characters, must be under \(limit).") }
                guard !text.allSatisfy(\.isWhitespace) else { throw Refusal(10017, "\(name) is blank.") }
            }
        }
        let extras = form.filter { $0.key.hasPrefix("extra.") }
        let custom = extras.keys.filter { !knownExtras.contains(String($0.dropFirst("extra.".count))) }
        guard custom.count <= 10 else { throw Refusal(65014, "\(custom.count) custom extra pairs, at most 10.") }
        for (key, value) in extras where key.count > 1024 || value.count > 1024 {
            throw Refusal(65015, "\(key) or its value is over 1024 characters.")
        }
        if let jobKey = form["extra.jobkey"], jobKey.count > 20 { throw Refusal(10017, "extra.jobkey is over 20 characters.") }
        if let effect = form["extra.notify_effect"], !["1", "2", "3"].contains(effect) {
            throw Refusal(10017, "extra.notify_effect must be 1, 2 or 3.")
        }
        let channel = form["extra.channel_id"]
        if let channel, !app.channels.isEmpty, !app.channels.contains(channel) {
            throw Refusal(27001, "extra.channel_id \(channel) is not a channel registered for this app.")
        }
        if form["extra.template_id"] != nil { try checkTemplateParameters(form["extra.template_param"]) }
        return Accepted(regIDs: regIDs, channel: channel)
    }

    /// A private-message template's parameters: a JSON object of 1..9 string values of 1..128 characters, not
    /// blank, without emoji or other symbols (`\p{So}`).
    static func checkTemplateParameters(_ text: String?) throws {
        guard let text else { throw Refusal(10016, "extra.template_id needs extra.template_param.") }
        guard let object = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any],
              (1...9).contains(object.count) else {
            throw Refusal(10017, "extra.template_param must be a JSON object of 1 to 9 parameters.")
        }
        for (name, value) in object {
            guard let value = value as? String, (1...128).contains(value.count), !value.allSatisfy(\.isWhitespace),
                  !value.unicodeScalars.contains(where: { $0.properties.generalCategory == .otherSymbol })
            else { throw Refusal(10017, "extra.template_param \(name) must be 1 to 128 characters, not blank, without symbols.") }
        }
    }

    private static func integer(_ form: [String: String], _ name: String, in range: ClosedRange<Int>) throws -> Int? {
        guard let text = form[name] else { return nil }
        guard let value = Int(text), range.contains(value) else { throw Refusal(10017, "\(name) \"\(text)\" is not valid.") }
        return value
    }
}
