import CoreMetrics

/// One push service's series (docs/metrics.md): `push_provider_*{provider="<name>", ...}`, with the same meaning and
/// labels for every provider, so the scheduler records through one interface and knows no service by name.
public final class ServiceMetrics: Sendable {
    /// Each provider's series, made on first use (a service keeps its own: `PushService.metrics`).
    private static let made = Locked<[Int: ServiceMetrics]>([:])

    public static func of(_ provider: PushProvider) -> ServiceMetrics {
        made.withLock { made in
            if let existing = made[provider.index] { return existing }
            let metrics = ServiceMetrics(provider: provider)
            made[provider.index] = metrics
            return metrics
        }
    }

    public let provider: PushProvider
    /// Request sent to answer received.
    public let requestDuration: Timer
    private let queueToServiceByLane: [Timer]
    private let responses: LabelledSeries<Counter>
    private let retries: LabelledSeries<Counter>
    private let connections: LabelledSeries<Gauge>
    private let connectionsOpened: LabelledSeries<Counter>
    private let streamsLimit: LabelledSeries<Gauge>
    private let requestsInFlight: LabelledSeries<Gauge>
    private let appsPaused: LabelledSeries<Gauge>
    private let tokenRenewals: LabelledSeries<Counter>


    private init(provider: PushProvider) {
        self.provider = provider
        let name = provider.rawValue
        // One family per kind of series, the provider a label of it: an alert or a panel is written once for every
        // provider, and a new provider is in them from its first series.
        let provided = [("provider", name)]
        requestDuration = Timer(label: "push_provider_request_duration_seconds", dimensions: provided)
        queueToServiceByLane = Lane.allCases.map {
            Timer(label: "push_queue_to_provider_seconds", dimensions: provided + [("list", $0.metricLabel)])
        }
        tokenRenewals = LabelledSeries { Counter(label: "push_provider_access_token_renewals_total", dimensions: provided + $0) }
        responses = LabelledSeries { Counter(label: "push_provider_responses_total", dimensions: provided + $0) }
        retries = LabelledSeries { Counter(label: "push_provider_retries_total", dimensions: provided + $0) }
        connections = LabelledSeries { Gauge(label: "push_provider_connections", dimensions: provided + $0) }
        connectionsOpened = LabelledSeries { Counter(label: "push_provider_connections_opened_total", dimensions: provided + $0) }
        streamsLimit = LabelledSeries { Gauge(label: "push_provider_streams_limit", dimensions: provided + $0) }
        requestsInFlight = LabelledSeries { Gauge(label: "push_provider_requests_in_flight", dimensions: provided + $0) }
        appsPaused = LabelledSeries { Gauge(label: "push_provider_app_paused", dimensions: provided + $0) }
    }

    /// The service's answers and retry reasons known in advance, made at 0 before the first event (`KnownSeries`:
    /// from the provider's apps, a module's from `ProviderDescription.knownResponses`).
    public func registerKnownSeries(responses known: [(status: Int, reason: String)], retries knownRetries: [String] = []) {
        for (status, reason) in known { responses.series([("status", String(status)), ("reason", reason)]).increment(by: 0) }
        for reason in knownRetries { retries.series([("reason", reason)]).increment(by: 0) }
    }

    /// `enqueued_at` to the service's answer, for messages of this input list.
    public func queueToService(_ lane: Lane) -> Timer { queueToServiceByLane[lane == .chat ? 0 : 1] }

    /// Answers (retried ones included); `status` 0 when none came (reset, timeout).
    public func responses(status: Int, reason: String, count: Int) {
        guard count > 0 else { return }
        responses.series([("status", String(status)), ("reason", MetricLabel.reason(reason))]).increment(by: count)
    }

    public func retries(reason: String, count: Int) {
        guard count > 0 else { return }
        retries.series([("reason", MetricLabel.reason(reason))]).increment(by: count)
    }

    public func connections(app: String, open: Int) {
        connections.series([("app", MetricLabel.reason(app, keep: MetricLabel.topicCharacters))]).record(open)
    }

    public func connectionOpened(app: String) {
        connectionsOpened.series([("app", MetricLabel.reason(app, keep: MetricLabel.topicCharacters))]).increment()
    }

    /// 1 while the service refuses the app's credential and its sending is paused.
    public func appPaused(app: String, paused: Bool) {
        appsPaused.series([("app", MetricLabel.reason(app, keep: MetricLabel.topicCharacters))]).record(paused ? 1 : 0)
    }

    public func streamsLimit(app: String, streams: Int) {
        streamsLimit.series([("app", MetricLabel.reason(app, keep: MetricLabel.topicCharacters))]).record(streams)
    }

    /// `push_provider_requests_in_flight{provider, app}`: requests on the wire, sampled every 50 ms.
    public func requestsInFlight(app: String, requests: Int) {
        requestsInFlight.series([("app", MetricLabel.reason(app, keep: MetricLabel.topicCharacters))]).record(requests)
    }

    /// `push_provider_access_token_renewals_total{provider, app, result}` of a module with OAuth access tokens: `result` ok or error.
    public func accessTokenRenewal(app: String, ok: Bool) {
        tokenRenewals.series([("app", MetricLabel.reason(app, keep: MetricLabel.topicCharacters)), ("result", ok ? "ok" : "error")]).increment()
    }

    public func registerAccessTokenSeries(app: String) {
        for ok in [true, false] {
            tokenRenewals.series([("app", MetricLabel.reason(app, keep: MetricLabel.topicCharacters)), ("result", ok ? "ok" : "error")]).increment(by: 0)
        }
    }
}
