/// `provider` of docs/message-format.md: which service a message goes to. Part of a job's headers, so messages for
/// different services never merge.
public enum PushProvider: String, Sendable, Hashable, CaseIterable {
    /// Apple Push Notification service (docs/transport.md); the default.
    case apns
    /// Firebase Cloud Messaging HTTP v1 (docs/fcm.md).
    case fcm
}
