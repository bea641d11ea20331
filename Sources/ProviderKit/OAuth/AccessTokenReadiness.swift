import PushCore

/// Readiness from a service account's own token requests (`AccessTokenCache`'s changes of state).
///
/// The cache asks the token endpoint at start and at each renewal, whether or not a message waits, but readiness
/// used to hear of a refused key only from the scheduler, when a message was held for it: a worker with no
/// message of the service waiting stayed ready with a key the service refuses, and said so only when the first message came. Here
/// each refusal marks every app of the account not ready at once, and a granted token clears what this set.
///
/// Its condition is its own (the endpoint's words as the reason): the scheduler's, set when a send is refused
/// (`PERMISSION_DENIED`, ...), is not this one's to clear, since a new token does not lift such a refusal.
public final class AccessTokenReadiness: Sendable {
    private struct State {
        var apps: [String]
        /// The refusal in force, told to apps added later as well.
        var refusal: String?
        var said: [Readiness.Condition] = []
    }
    private let readiness: Readiness?
    private let state: Locked<State>
    /// The service whose key it is, as readiness names it.
    private let service: String

    public init(readiness: Readiness?, app: String, service: String) {
        self.readiness = readiness
        self.service = service
        state = Locked(State(apps: [app]))
    }

    /// Another app served by the same account.
    public func add(app: String) {
        state.withLock { state in
            state.apps.append(app)
            if let reason = state.refusal { say(app: app, reason: reason, in: &state) }
        }
    }

    /// The cache's `onChange`, on its renewal thread.
    public func changed(_ token: AccessTokenState) {
        guard let readiness else { return }
        state.withLock { state in
            switch token {
            case .refused(let reason):
                guard state.refusal != reason else { return }
                state.said.forEach(readiness.clear)
                state.said = []
                state.refusal = reason
                for app in state.apps { say(app: app, reason: reason, in: &state) }
            case .ready:
                state.said.forEach(readiness.clear)
                state.said = []
                state.refusal = nil
            case .unavailable:
                // The endpoint unreachable after a refusal says nothing about the key: the refusal stands until a
                // token is granted. (A wait the scheduler reports itself, for the messages it holds.)
                break
            }
        }
    }

    private func say(app: String, reason: String, in state: inout State) {
        let condition = Readiness.Condition.credentialsRejected(app: app, reason: reason, service: service)
        readiness?.set(condition)
        state.said.append(condition)
    }
}
