/// What a MiPush result code means for the request (docs/vendors.md, "Outcomes").
/// Codes Xiaomi does not list here are about the message ("anything else about the message" in docs/vendors.md): a
/// dead letter with the code, where a retry would send the same refused request again and again. A new code that
/// is in fact transient then costs dead letters rather than a retry storm, and shows in them by its number.
enum XiaomiCode {
    enum Kind: Equatable {
        case success
        /// Internal errors, busy, send failed, request expired, remote error: retried with backoff.
        case retry
        /// 10027, called too often: retried, and the app's rate lowered for a while.
        case overRate
        /// The app's messages for the day are spent: wait for the next Xiaomi day.
        case quotaSpent
        /// Authentication failed, the app or its package forbidden or blacklisted: pause the app.
        case credential
        /// A value the app's configuration supplies is refused (27001: the channel does not match the app's):
        /// the app pauses with Xiaomi's code and words, unless the message's own `xiaomi` object set it.
        case configuration
        /// The message is refused (parameters, lengths, callback): a dead letter.
        case message
    }

    static func kind(of code: Int64) -> Kind {
        switch code {
        case 0:
            return .success
        // Unknown, internal, system busy (-1, 1, 10001-10003), request expired (10037), send failed (20301,
        // 22102: "bounded retry", unverified; the attempts bound it), remote errors (20607, 26003, 65029),
        // broadcast too frequent (26004).
        case -1, 1, 10001...10003, 10037, 20301, 20607, 22102, 26003, 26004, 65029:
            return .retry
        case 10027:
            return .overRate
        // 10034: too many messages today. 200001: the same, as one PHP integration saw it (third-party code,
        // unverified): read both ways, since a wait costs nothing where a dead letter would lose the message.
        case 10034, 200001:
            return .quotaSpent
        // Blacklisted (10031), forbidden (10036), authentication failed (21301-21303), an illegal app, key or
        // package (22000-22022, the range docs/vendors.md names).
        case 10031, 10036, 21301...21303, 22000...22022:
            return .credential
        case 27001:
            return .configuration
        default:
            return .message
        }
    }
}
