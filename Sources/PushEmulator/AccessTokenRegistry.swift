import Foundation
import NIOConcurrencyHelpers

/// The FCM access tokens the emulator's token endpoint issued, and the test hooks around them: revoke,
/// change the lifetime of the next ones, take the endpoint down. `messages:send` asks `check(bearer:)`.
public final class AccessTokenRegistry: Sendable {
    /// What a bearer presented to `messages:send` is.
    public enum BearerCheck: Sendable, Equatable {
        case valid(clientEmail: String)
        case unknown
        case expired
        case revoked
    }

    private struct Issued {
        let clientEmail: String
        let expiresAt: Double
        var revoked = false
    }

    private struct State {
        var issued: [String: Issued] = [:]
        var lifetimeSeconds: Int64
        var down = false
        var requests = 0
        var refusals = 0
    }

    private let state: NIOLockedValueBox<State>

    public init(lifetimeSeconds: Int64) {
        state = NIOLockedValueBox(State(lifetimeSeconds: max(1, lifetimeSeconds)))
    }

    /// A new opaque token for `clientEmail` and its lifetime (seconds).
    func issue(clientEmail: String, now: Double) -> (token: String, expiresIn: Int64) {
        let token = "ya29.emulator-" + (0..<3).map { _ in String(UInt64.random(in: .min ... .max), radix: 16) }.joined()
        return state.withLockedValue { state in
            state.issued[token] = Issued(clientEmail: clientEmail, expiresAt: now + Double(state.lifetimeSeconds))
            return (token, state.lifetimeSeconds)
        }
    }

    /// Counts a request to the token endpoint; false when it is down (the request gets 503).
    func noteRequest() -> Bool {
        state.withLockedValue { state in
            state.requests += 1
            return !state.down
        }
    }

    func noteRefusal() { state.withLockedValue { $0.refusals += 1 } }

    public func check(bearer: String, now: Double = Date().timeIntervalSince1970) -> BearerCheck {
        state.withLockedValue { state in
            guard let issued = state.issued[bearer] else { return .unknown }
            if issued.revoked { return .revoked }
            return now >= issued.expiresAt ? .expired : .valid(clientEmail: issued.clientEmail)
        }
    }

    /// Revokes every token issued so far (a test hook: the next `messages:send` with one gets 401).
    public func revokeAll() {
        state.withLockedValue { state in
            for token in state.issued.keys { state.issued[token]?.revoked = true }
        }
    }

    /// Takes the token endpoint down (503 to every request) or brings it back.
    public func setDown(_ down: Bool) { state.withLockedValue { $0.down = down } }

    /// The `expires_in` of tokens issued from now on.
    public func setLifetime(seconds: Int64) { state.withLockedValue { $0.lifetimeSeconds = max(1, seconds) } }

    /// Requests to the token endpoint, answered or not.
    public var requestCount: Int { state.withLockedValue { $0.requests } }
    /// Tokens issued.
    public var issuedCount: Int { state.withLockedValue { $0.issued.count } }
    /// Assertions refused (400/401 answers).
    public var refusalCount: Int { state.withLockedValue { $0.refusals } }
}
