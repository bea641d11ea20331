import PushCore

/// The message's payload in the one shape every Android vendor takes (docs/vendors.md: Firebase's shape, so producers write one):
/// `notification` {`title`, `body`, `image`}, `data` {string: string}, and the vendor's own object (named after the
/// provider) whose members go into the vendor's request as they are, last. Read from the job's payload bytes once per
/// job.
///
/// Validating the shape is the message parser's work, before a message is claimed; here a payload that is not
/// what it should be (not JSON, a field of another type) never traps: what cannot be read counts as absent, and
/// whatever the vendor then refuses for the whole request is a dead letter with its code.
public struct AndroidPayload: Equatable, Sendable {
    public var title: String?
    public var body: String?
    public var image: String?
    /// Whether the payload has a `notification` object at all (else a data message).
    public var hasNotification = false
    /// `data` as given (an object of strings), nil when absent or empty.
    public var data: JSONValue?
    /// The vendor's object, nil when absent (anything but an object is ignored).
    public var vendor: JSONValue?

    public init(title: String? = nil, body: String? = nil, image: String? = nil, hasNotification: Bool = false,
         data: JSONValue? = nil, vendor: JSONValue? = nil) {
        self.title = title
        self.body = body
        self.image = image
        self.hasNotification = hasNotification
        self.data = data
        self.vendor = vendor
    }

    /// `vendorKey`: the name of the vendor's object (the provider's name).
    public init(bytes: [UInt8], vendorKey: String) {
        guard let document = try? JSONParser.parse(bytes) else { return }
        if case .object? = document["notification"], let notification = document["notification"] {
            hasNotification = true
            title = notification["title"]?.stringValue
            body = notification["body"]?.stringValue
            image = notification["image"]?.stringValue
        }
        if case .object(let members)? = document["data"], !members.isEmpty { data = document["data"] }
        if case .object? = document[vendorKey] { vendor = document[vendorKey] }
    }
}
