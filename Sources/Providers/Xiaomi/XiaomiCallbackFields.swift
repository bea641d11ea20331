/// The `extra.callback*` fields that ask MiPush for a message's receipts, for an app with a `callback_url`:
/// `extra.callback` the app's callback URL (`XiaomiCallbackPath`), `extra.callback.param` the message's `id` (Xiaomi
/// takes at most 64 characters: a longer id sends none, and its receipts fall back to Xiaomi's message id), and
/// `extra.callback.type` the reports wanted, a sum of Xiaomi's bits.
enum XiaomiCallbackFields {
    /// 1 delivered, 16 target invalid (the dead tokens), 32 the app disabled push, 64 filtered by a condition,
    /// 128 over the daily quota; clicks (2) are not asked for: they say nothing of a token's health and would
    /// double the callbacks.
    static let type = 1 + 16 + 32 + 64 + 128
    static let longestParam = 64

    static func fields(callbackURL: String, messageID: String) -> [(name: String, value: String)] {
        var fields = [("extra.callback", callbackURL), ("extra.callback.type", String(type))]
        if !messageID.isEmpty && messageID.count <= longestParam { fields.append(("extra.callback.param", messageID)) }
        return fields
    }
}
