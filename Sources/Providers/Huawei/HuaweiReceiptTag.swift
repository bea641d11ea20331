/// The tag a receipt names our message by: v1 `android.bi_tag`, v3 `pushOptions.biTag`, the message's `id`. Sent
/// only for an app with receipt settings (elsewhere nothing reads it). Huawei takes at most 64 bytes: a longer id
/// sends no tag (a cut one could name another message), and its receipts fall back to Huawei's request id.
enum HuaweiReceiptTag {
    static let longestBytes = 64

    static func of(messageID: String) -> String? {
        messageID.isEmpty || messageID.utf8.count > longestBytes ? nil : messageID
    }
}
