/// The `fcm` block of docs/configuration.md: Android devices through Firebase Cloud Messaging HTTP v1 (docs/fcm.md).
/// No apps: FCM is off, and a message with `"provider": "fcm"` is a dead letter (`TopicNotConfigured`).
public struct FCMSettings: Sendable, Equatable {
    public static let defaultEndpoint = "https://fcm.googleapis.com"
    /// `https://host[:port]`, without a trailing slash.
    public var endpoint = FCMSettings.defaultEndpoint
    /// The token endpoint for every service account; empty: each file's own `token_uri`.
    public var tokenURI = ""
    /// An extra CA to trust for FCM and the token endpoint (emulator, tests).
    public var caFile = ""
    /// Connections per project, opened at start...
    public var connections = 2
    /// ...and at most, when the servers' stream limits are scarce (FCM allows 100 streams per connection).
    public var maxConnections = 16
    public var requestTimeoutMillis = 10_000
    /// PING a connection that has received nothing for this long (FCM closes idle ones after about 3 minutes,
    /// and answers PINGs that come too often with GOAWAY ENHANCE_YOUR_CALM).
    public var pingIntervalMillis = 60_000
    public var apps: [FCMApp] = []
    public init() {}

    public var isEnabled: Bool { !apps.isEmpty }
}

/// One Android app: the `topic` messages name with `"provider": "fcm"`, and its service account.
public struct FCMApp: Sendable, Equatable {
    public var topic: String
    public var serviceAccountFile: String
    /// Empty: the service account file's `project_id`.
    public var projectID: String

    public init(topic: String, serviceAccountFile: String, projectID: String = "") {
        self.topic = topic
        self.serviceAccountFile = serviceAccountFile
        self.projectID = projectID
    }
}
