/// What a message is to the vendors that classify pushes (China's Android vendors audit the class an app claims
/// and penalise a wrong one): *chat* (a private or group message on `push:queue`, what a person is waiting
/// for), *system* (`kind: system`: account and security notices) and *bulk* (anything on `push:queue:bulk`:
/// broadcasts and campaigns, counted against the vendor's marketing quota). Each app configures the vendor's value
/// per class; a spent quota holds only the class it was spent for.
public enum MessageClass: String, Sendable, CaseIterable, Hashable {
    case chat
    case system
    case bulk

    /// The class of a message of `kind` claimed from `lane`: the bulk list decides first (a system notice sent as a
    /// broadcast is bulk), then the kind.
    public init(lane: Lane, kind: MessageKind) {
        if lane == .bulk {
            self = .bulk
        } else {
            self = kind == .system ? .system : .chat
        }
    }

    /// The input list a message of this class came from, and goes back to when it was parked.
    public var lane: Lane { self == .bulk ? .bulk : .chat }
}
