import CoreMetrics

/// The worker's metrics, recorded through swift-metrics (docs/metrics.md; the names are public API).
///
/// Handles are made once, on first use of `shared`, from whatever factory `MetricsSystem` holds then:
/// `worker run` bootstraps Prometheus before anything records, the tools never do (their recordings go
/// nowhere). Labelled series are made on first use and cached, and their label values are bounded
/// (`MetricLabel`), so a server that invents reasons cannot grow the registry without limit.
public final class PushMetrics: Sendable {
    public static let shared = PushMetrics()

    public let messagesClaimed: Counter
    public let messagesAcknowledged: Counter
    public let messagesMerged: Counter
    public let inFlightNotifications: Gauge
    public let redisReconnects: Counter
    /// Claims this worker dropped unsent because recovery gave them to another worker while it was paused or
    /// cut off from Redis (ownership fencing).
    public let claimsLost: Counter
    /// Acknowledgements that `redis.wait_replicas` replicas did not confirm within `redis.wait_timeout_ms`.
    public let redisWaitShortfalls: Counter

    private let notifications = LabelledSeries<Counter> { Counter(label: "push_notifications_total", dimensions: $0) }
    /// The topics `push_notifications_total` names in its `app` label (`configureApps`); any other is `other`.
    private let apps = Locked<Set<String>>([])
    private let renewals = LabelledSeries<Counter> { Counter(label: "push_provider_token_renewals_total", dimensions: $0) }
    private let filterReloads = LabelledSeries<Counter> { Counter(label: "push_filter_reloads_total", dimensions: $0) }
    public let filterWords: Gauge
    private let queueLengths = LabelledSeries<Gauge> { Gauge(label: "push_queue_length", dimensions: $0) }
    private let queueOldestAges = LabelledSeries<Gauge> { Gauge(label: "push_queue_oldest_age_seconds", dimensions: $0) }
    private let parked = LabelledSeries<Counter> { Counter(label: "push_messages_parked_total", dimensions: $0) }
    private let unparked = LabelledSeries<Counter> { Counter(label: "push_messages_unparked_total", dimensions: $0) }
    private let possiblyDuplicatedTokens = LabelledSeries<Counter> { Counter(label: "push_notifications_possibly_duplicated_total", dimensions: $0) }
    private let protocols = LabelledSeries<Gauge> { Gauge(label: "push_http_protocol", dimensions: $0) }
    private let parkedNow = LabelledSeries<Gauge> { Gauge(label: "push_parked", dimensions: $0) }
    private let parkedOldestAge = LabelledSeries<Gauge> { Gauge(label: "push_parked_oldest_age_seconds", dimensions: $0) }

    private init() {
        messagesClaimed = Counter(label: "push_messages_claimed_total")
        messagesAcknowledged = Counter(label: "push_messages_acknowledged_total")
        messagesMerged = Counter(label: "push_messages_merged_total")
        inFlightNotifications = Gauge(label: "push_in_flight_notifications")
        redisReconnects = Counter(label: "push_redis_reconnects_total")
        claimsLost = Counter(label: "push_claims_lost_total")
        redisWaitShortfalls = Counter(label: "push_redis_wait_shortfalls_total")
        filterWords = Gauge(label: "push_filter_words")
    }

    /// Every app's outcomes known in advance (a provider's own are added with its apps, `KnownSeries.outcomes`).
    public static let knownAppOutcomes: [(outcome: String, reason: String)] = [("delivered", ""), ("filtered", "SensitiveWord")]
    /// Outcomes of messages whose app is not a configured one, or not known at all (`app="other"`).
    public static let knownOtherOutcomes: [(outcome: String, reason: String)] = [
        ("dead_letter", "InvalidMessage"), ("dead_letter", "PoisonMessage"), ("dead_letter", "TopicNotConfigured"),
    ]
    /// The `app` label of a topic that is not a configured app: a flood of unknown topics makes one series.
    public static let otherApp = "other"
    /// The core's own series known in advance (a provider's are registered with its apps: `KnownSeries`).
    public func registerKnownSeries() {
        for result in ["ok", "failed"] { filterReloads.series([("result", result)]).increment(by: 0) }
    }

    /// `result` is ok or failed (the previous lists stay in use).
    public func filterReload(result: String) {
        filterReloads.series([("result", result)]).increment()
    }

    /// The apps `push_notifications_total` names in its `app` label: the topics of every provider's apps. A topic not
    /// among them (a producer's typo, a flood of invented topics) is counted as `other`, so the series stay bounded
    /// by the configuration. Makes each app's known outcomes at 0 (`knownAppOutcomes` and the provider's `outcomes`).
    public func configureApps(_ providers: [(provider: PushProvider, topics: [String], outcomes: [(outcome: String, reason: String)])]) {
        let topics = Set(providers.flatMap(\.topics))
        apps.withLock { $0 = topics }
        // Room for every app's outcomes and reasons; beyond it (reasons invented by a server), `other`.
        notifications.raiseLimit(to: 200 + 50 * topics.count)
        for (provider, list, outcomes) in providers {
            for topic in list {
                for (outcome, reason) in Self.knownAppOutcomes + outcomes {
                    notifications(provider: provider, app: topic, outcome: outcome, reason: reason, count: 0)
                }
            }
        }
        for (outcome, reason) in Self.knownOtherOutcomes {
            notifications(provider: .default, app: nil, outcome: outcome, reason: reason, count: 0)
        }
    }

    /// The `app` label of a message's topic: the topic when it is a configured app, else `other`.
    public func appLabel(_ topic: String?) -> String {
        guard let topic, apps.withLock({ $0.contains(topic) }) else { return Self.otherApp }
        return MetricLabel.reason(topic, keep: MetricLabel.topicCharacters)
    }

    /// Final outcomes per token: `outcome` is delivered, feedback, dead_letter or filtered; `app` the message's
    /// topic (nil when it is not known: an element that did not parse). A count of 0 makes the series.
    public func notifications(provider: PushProvider, app: String?, outcome: String, reason: String, count: Int) {
        guard count >= 0 else { return }
        notifications.series([("provider", provider.rawValue), ("app", appLabel(app)), ("outcome", outcome),
                              ("reason", MetricLabel.reason(reason))]).increment(by: count)
    }

    /// What an `OutcomeTally` counted: one increment per distinct provider, app, outcome and reason.
    public func notifications(_ counts: [OutcomeTally.Key: Int]) {
        for (key, count) in counts where count > 0 {
            notifications(provider: key.provider, app: key.app, outcome: key.outcome, reason: key.reason, count: count)
        }
    }

    public func providerTokenRenewed(app: String) {
        renewals.series([("app", MetricLabel.reason(app, keep: MetricLabel.topicCharacters))]).increment()
    }

    /// `list` is queue, dlq or feedback.
    /// How long the oldest message of an input list has waited (from its `enqueued_at`; 0 for an empty list or one
    /// whose oldest message carries none).
    public func queueOldestAge(list: String, seconds: Int64) {
        queueOldestAges.series([("list", list)]).record(Int(max(0, seconds)))
    }

    public func queueLength(list: String, length: Int) {
        queueLengths.series([("list", list)]).record(length)
    }

    /// Isolation: messages of an app that could not send, parked in Redis when claimed
    /// (`push_messages_parked_total`), and put back on their input list when it could again
    /// (`push_messages_unparked_total`); `worker status` shows what is parked now.
    public func messagesParked(provider: PushProvider, app: String, count: Int) {
        guard count > 0 else { return }
        parked.series([("provider", provider.rawValue), ("app", appLabel(app))]).increment(by: count)
    }

    /// `push_notifications_possibly_duplicated_total{provider, app}`: notifications whose request the service may
    /// have had without answering (a timeout after it was written, a connection lost after it was sent), sent again.
    public func possiblyDuplicated(provider: PushProvider, app: String, count: Int) {
        guard count > 0 else { return }
        possiblyDuplicatedTokens.series([("provider", provider.rawValue), ("app", appLabel(app))]).increment(by: count)
    }

    /// `push_http_protocol{provider, app, protocol}`: 1 for the HTTP version a lane's last answer came over (`h2`,
    /// `http/1.1`), 0 for one it no longer uses. Where a vendor offers HTTP/1.1 only, each connection carries one
    /// request at a time, and the pool grows to `max_connections`.
    public func httpProtocol(provider: PushProvider, app: String, protocol name: String, inUse: Bool) {
        protocols.series([("provider", provider.rawValue), ("app", appLabel(app)), ("protocol", name)]).record(inUse ? 1 : 0)
    }

    /// `push_parked{provider, app, class, reason}`: messages parked now for an app and class (each worker that
    /// sends for the app reports the list's length: take the max across workers), `reason` why they wait ("" while
    /// they go back), and `push_parked_oldest_age_seconds{provider, app, class}` how long the oldest has waited
    /// since it was enqueued (from `enqueued_at`; 0 when unknown).
    public func parked(provider: PushProvider, app: String, messageClass: MessageClass, reason: String, messages: Int) {
        parkedNow.series([("provider", provider.rawValue), ("app", appLabel(app)), ("class", messageClass.rawValue),
                          ("reason", reason)]).record(messages)
    }

    public func parkedOldestAge(provider: PushProvider, app: String, messageClass: MessageClass, seconds: Int64) {
        parkedOldestAge.series([("provider", provider.rawValue), ("app", appLabel(app)), ("class", messageClass.rawValue)])
            .record(Int(max(0, seconds)))
    }

    public func messagesUnparked(provider: PushProvider, app: String, count: Int) {
        guard count > 0 else { return }
        unparked.series([("provider", provider.rawValue), ("app", appLabel(app))]).increment(by: count)
    }


    /// `push_build_info{version, commit}`: always 1, so dashboards can show which version each worker runs and a
    /// rollout's progress.
    public func buildInfo(version: String, commit: String) {
        Gauge(label: "push_build_info", dimensions: [("version", MetricLabel.reason(version, keep: MetricLabel.topicCharacters)),
                                                     ("commit", MetricLabel.reason(commit, keep: MetricLabel.topicCharacters))]).record(1)
    }
}

/// Series of one metric by label values, made on first use. At most `limit` distinct label sets: past
/// that, new values share one series labelled `other`.
final class LabelledSeries<Handle: AnyObject>: Sendable {
    private let make: @Sendable ([(String, String)]) -> Handle
    private let table = Locked<[String: UnsafeHandle]>([:])
    private let limit: Locked<Int>

    /// The handles are swift-metrics objects, thread-safe by that API's contract.
    private struct UnsafeHandle: @unchecked Sendable { let handle: Handle }

    init(limit: Int = 200, make: @escaping @Sendable ([(String, String)]) -> Handle) {
        self.limit = Locked(limit)
        self.make = make
    }

    /// More label sets allowed (a label bounded by the configuration, like `app`, multiplies the others).
    func raiseLimit(to value: Int) { limit.withLock { $0 = max($0, value) } }

    func series(_ labels: [(String, String)]) -> Handle {
        let key = labels.map { "\($0.0)=\($0.1)" }.joined(separator: "\u{1}")
        let limit = self.limit.withLock { $0 }
        return table.withLock { table in
            if let known = table[key] { return known.handle }
            let overflow = table.count >= limit
            let effective = overflow ? labels.map { ($0.0, "other") } : labels
            let effectiveKey = overflow ? effective.map { "\($0.0)=\($0.1)" }.joined(separator: "\u{1}") : key
            if let known = table[effectiveKey] { return known.handle }
            let handle = make(effective)
            table[effectiveKey] = UnsafeHandle(handle: handle)
            return handle
        }
    }
}

/// Label values from text the worker does not control (a service's reasons, our own dead-letter reasons that
/// carry details after a colon): the leading word only, in a safe alphabet, clipped.
public enum MetricLabel {
    public static let wordCharacters = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
    public static let topicCharacters = wordCharacters.union(".-")

    public static func reason(_ text: String, keep: Set<Character> = wordCharacters) -> String {
        let head = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        // A negative code keeps its sign (a vendor's -1, "unknown error", is not its 1).
        let negative = !keep.contains("-") && head.first == "-" && head.dropFirst().first?.isASCII == true
            && head.dropFirst().first?.isNumber == true
        let cleaned = (negative ? "-" : "") + String(head.filter { keep.contains($0) }.prefix(negative ? 63 : 64))
        return cleaned.isEmpty && !text.isEmpty ? "other" : cleaned
    }
}
