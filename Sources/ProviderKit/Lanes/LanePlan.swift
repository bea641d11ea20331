/// One lane as a module describes it: how it reaches its service (`TransportSettings`) and the service itself.
/// The `Pusher` starts it as a thread of its own, adding what is the worker's (the retry rules, the wait board, the
/// lane's number on it, the state an app's lanes share about their credential: refused, paused, held).
public struct LanePlan {
    public var settings: TransportSettings
    public var service: any PushService

    public init(settings: TransportSettings, service: any PushService) {
        self.settings = settings
        self.service = service
    }
}

/// A running lane, as what a module made may wake: a token cache wakes its app's lanes when a token is granted
/// after a wait, so that what waited for it leaves at once.
public protocol LaneWaking: AnyObject, Sendable {
    func wake()
}
