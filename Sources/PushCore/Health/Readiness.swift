import Synchronization

/// Why the worker is not ready to take work, as `/readyz` reports it (docs/metrics.md): the stages set and
/// clear their own conditions. The worker is ready when none of its own is set (starting, Redis unreachable,
/// draining). An app's conditions (a refused credential, none to be had yet) are said beside it (`heldApps`) but
/// never make the pod NotReady: isolation holds that app's messages alone, the pod still claims and sends for every
/// other, and a tenant's revoked key must not stall rollouts, node drains and the readiness alerts fleet-wide.
public final class Readiness: Sendable {
    public enum Condition: Hashable, Sendable {
        /// The pipeline has not finished starting (first contact with Redis, recovery of earlier claims).
        case starting
        /// A shard's Redis could not be reached by the last heartbeat.
        case redisUnreachable(shard: String)
        /// SIGTERM received: finishing in-flight work, claiming nothing new.
        case draining
        /// A service refused an app's credentials (InvalidProviderToken, BadCertificate, invalid_grant, ...).
        case credentialsRejected(app: String, reason: String, service: String)
        /// No credential can be had for an app just now (an OAuth token endpoint unreachable): its messages wait.
        case credentialUnavailable(app: String, reason: String)
    }

    private let conditions = Locked<[Condition: UInt64]>([:])
    private let order = Atomic<UInt64>(0)

    public init(starting: Bool = true) {
        if starting { set(.starting) }
    }

    public func set(_ condition: Condition) {
        let stamp = order.add(1, ordering: .relaxed).newValue
        conditions.withLock { if $0[condition] == nil { $0[condition] = stamp } }
    }

    public func clear(_ condition: Condition) {
        _ = conditions.withLock { $0.removeValue(forKey: condition) }
    }

    /// Clears every credential condition of one app (a request with its credentials succeeded).
    public func clearCredentials(app: String) {
        conditions.withLock { table in
            for condition in table.keys {
                if case .credentialsRejected(app, _, _) = condition { table[condition] = nil }
            }
        }
    }

    /// Says why an app's credential cannot be had, replacing what was said before for it.
    public func setCredentialWait(app: String, reason: String) {
        let stamp = order.add(1, ordering: .relaxed).newValue
        conditions.withLock { table in
            var since = stamp
            for (condition, stamp) in table {
                if case .credentialUnavailable(app, _) = condition {
                    since = min(since, stamp)
                    table[condition] = nil
                }
            }
            table[.credentialUnavailable(app: app, reason: reason)] = since
        }
    }

    /// An app's credential can be had again.
    public func clearCredentialWait(app: String) {
        conditions.withLock { table in
            for condition in table.keys {
                if case .credentialUnavailable(app, _) = condition { table[condition] = nil }
            }
        }
    }

    public var isReady: Bool { conditions.withLock { table in table.keys.allSatisfy(\.isAppCondition) } }

    /// One line naming every reason the pod is not ready, oldest first; nil when ready.
    public var reason: String? { describe { !$0.isAppCondition } }

    /// One line naming every app whose messages are held for its credential, oldest first; nil for none.
    public var heldApps: String? { describe(\.isAppCondition) }

    private func describe(_ included: (Condition) -> Bool) -> String? {
        let current = conditions.withLock { table in table.filter { included($0.key) }.sorted { $0.value < $1.value }.map(\.key) }
        guard !current.isEmpty else { return nil }
        return current.map(Self.describe).joined(separator: "; ")
    }

    static func describe(_ condition: Condition) -> String {
        // (An app's conditions read as what holds that app's messages.)
        switch condition {
        case .starting: return "starting: connecting to Redis and recovering earlier claims"
        case .redisUnreachable(let shard): return "Redis unreachable (\(shard))"
        case .draining: return "draining: shutting down, no new claims"
        case .credentialsRejected(let app, let reason, let service): return "\(service) rejected the credentials of \(app): \(reason)"
        case .credentialUnavailable(let app, let reason): return "no credential for \(app) yet: \(reason)"
        }
    }
}

extension Readiness.Condition {
    /// A condition of one app, not of the pod.
    var isAppCondition: Bool {
        switch self {
        case .credentialsRejected, .credentialUnavailable: return true
        case .starting, .redisUnreachable, .draining: return false
        }
    }
}
