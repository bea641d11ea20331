import Foundation
import NIOConcurrencyHelpers

/// What `messages:send` received and answered: deliveries per token (tests check "each token exactly once"),
/// answers by status and by reason, the most FCM streams one connection had open at once, and the last request.
/// Part of `GET /_emulator/stats` (its `fcm` object).
public final class FCMStats: Sendable {
    private struct Counts {
        var requests = 0
        var delivered = 0
        var validatedOnly = 0
        var deliveredByToken: [String: Int] = [:]
        var byStatus: [Int: Int] = [:]
        var byReason: [String: Int] = [:]
        var peakStreams = 0
        var refused = 0
        var goAways = 0
        var lastRequest: IncomingRequest?
    }

    private let counts = NIOLockedValueBox(Counts())

    public init() {}

    func record(_ request: IncomingRequest, answer: FCMAnswer) {
        counts.withLockedValue { counts in
            counts.requests += 1
            counts.lastRequest = request
            counts.byStatus[answer.status, default: 0] += 1
            if let error = answer.error { counts.byReason[error.reason, default: 0] += 1 }
            guard answer.status == 200, let token = answer.token else { return }
            if answer.validatedOnly {
                counts.validatedOnly += 1
            } else {
                counts.delivered += 1
                counts.deliveredByToken[token, default: 0] += 1
            }
        }
    }

    func noteActiveStreams(_ active: Int) { counts.withLockedValue { $0.peakStreams = max($0.peakStreams, active) } }

    func streamRefused() { counts.withLockedValue { $0.refused += 1 } }

    func goAwaySent() { counts.withLockedValue { $0.goAways += 1 } }

    /// `messages:send` requests answered (any status).
    public var requests: Int { counts.withLockedValue { $0.requests } }

    /// Messages accepted for delivery (200, `validate_only` excepted).
    public var delivered: Int { counts.withLockedValue { $0.delivered } }

    /// 200 answers to `validate_only` requests (nothing delivered).
    public var validatedOnly: Int { counts.withLockedValue { $0.validatedOnly } }

    /// How often `token` was delivered.
    public func deliveredCount(token: String) -> Int { counts.withLockedValue { $0.deliveredByToken[token] ?? 0 } }

    /// Every delivered token and how often.
    public var deliveredByToken: [String: Int] { counts.withLockedValue { $0.deliveredByToken } }

    /// How many distinct tokens were delivered: cheap to poll (`deliveredByToken` hands out the dictionary, and
    /// the next delivery then copies all of it while holding the lock).
    public var distinctTokensDelivered: Int { counts.withLockedValue { $0.deliveredByToken.count } }

    /// Tokens delivered more than once, with their counts.
    public var duplicates: [String: Int] { counts.withLockedValue { $0.deliveredByToken.filter { $0.value > 1 } } }

    public func count(status: Int) -> Int { counts.withLockedValue { $0.byStatus[status] ?? 0 } }

    /// Answers by FcmError code (`UNREGISTERED`, `QUOTA_EXCEEDED`, ...) or, without one, by status
    /// (`UNAUTHENTICATED` for a rejected access token, `PERMISSION_DENIED`).
    public func count(reason: String) -> Int { counts.withLockedValue { $0.byReason[reason] ?? 0 } }

    /// The most `messages:send` streams one connection had open at once.
    public var peakConcurrentStreams: Int { counts.withLockedValue { $0.peakStreams } }

    /// Streams refused (REFUSED_STREAM) on the FCM listener for exceeding its SETTINGS_MAX_CONCURRENT_STREAMS.
    public var refusedStreams: Int { counts.withLockedValue { $0.refused } }

    /// GOAWAY frames sent by the `goawayAfterStreams` fault.
    public var goAways: Int { counts.withLockedValue { $0.goAways } }

    /// The last `messages:send` request as received (header names lower-cased; the body as sent).
    public var lastRequest: IncomingRequest? { counts.withLockedValue { $0.lastRequest } }

    var jsonObject: [String: Any] {
        counts.withLockedValue { counts in
            [
                "requests": counts.requests, "delivered": counts.delivered, "validated_only": counts.validatedOnly,
                "distinct_tokens": counts.deliveredByToken.count,
                "duplicate_tokens": counts.deliveredByToken.values.filter { $0 > 1 }.count,
                "peak_concurrent_streams": counts.peakStreams, "refused_streams": counts.refused, "goaways": counts.goAways,
                "by_status": Dictionary(uniqueKeysWithValues: counts.byStatus.map { (String($0.key), $0.value) }),
                "by_reason": counts.byReason,
            ]
        }
    }
}
