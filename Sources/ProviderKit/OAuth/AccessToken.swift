import PushCore

/// An OAuth 2.0 access token and what the cache knows about it. The bearer is a `Secret`: never printed.
public struct AccessToken: Sendable, Equatable, CustomStringConvertible {
    public let bearer: Secret
    /// As the endpoint said (clamped to 1...86400).
    public let expiresIn: Int64
    /// 1 for the first token, bumped on each renewal: a caller reports a rejection by generation, so a token
    /// renewed meanwhile is not renewed again.
    public let generation: Int
    /// Monotonic seconds (the cache's clock) when it stops being used.
    let expiresAt: Double

    public var description: String { "AccessToken(#\(generation), expires_in \(expiresIn) s)" }
}

/// What a caller can do now, read without waiting for any I/O.
public enum AccessTokenState: Sendable, Equatable, CustomStringConvertible {
    case ready(AccessToken)
    /// None yet, expired, rejected, or the endpoint is unreachable: requests wait (spending no attempt).
    case unavailable(reason: String)
    /// The endpoint refuses the key (`invalid_grant`...): the app pauses as for any other refused credential.
    case refused(reason: String)

    public var token: AccessToken? {
        if case .ready(let token) = self { return token }
        return nil
    }

    public var description: String {
        switch self {
        case .ready(let token): return "ready \(token)"
        case .unavailable(let reason): return "no access token: \(reason)"
        case .refused(let reason): return "access token refused: \(reason)"
        }
    }
}

/// The renewal moment of an OAuth access token, as seconds after the token was asked for.
public enum AccessTokenRenewal {
    /// When 5 minutes remain; a token issued for less than 10 minutes, when half its lifetime remains.
    public static func renewAfter(expiresIn: Int64) -> Double {
        expiresIn < 600 ? Double(expiresIn) / 2 : Double(expiresIn - 300)
    }

    /// Never two requests within this many seconds, whatever asks (rejections, failures).
    public static let minimumInterval = 1.0
}
