/// `provider` of SPEC section 2: which service a message goes to. Part of a job's headers, so messages for
/// different services never merge.
public enum PushProvider: String, Sendable, Hashable, CaseIterable {
    /// Apple Push Notification service (section 4); the default.
    case apns
    /// Firebase Cloud Messaging HTTP v1 (section 4b).
    case fcm
}
