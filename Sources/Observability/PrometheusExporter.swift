import CoreMetrics
import Prometheus
import PushCore

/// Routes swift-metrics into one Prometheus registry, once per process, before anything records.
public enum PrometheusExporter {
    /// Buckets for push-service latencies: a healthy answer takes a few milliseconds to a few hundred, a stalled
    /// one up to the request timeout; queue-to-service includes backlog waits of seconds.
    public static let latencyBuckets: [Duration] = [
        .milliseconds(1), .microseconds(2500), .milliseconds(5), .milliseconds(10), .milliseconds(25),
        .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1),
        .milliseconds(2500), .seconds(5), .seconds(10), .seconds(30),
    ]

    /// Installs the Prometheus factory as swift-metrics' backend and returns the registry `/metrics` serves;
    /// `push_build_info` says `version` and `commit`.
    public static func bootstrap(version: String, commit: String) -> PrometheusCollectorRegistry {
        let registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = latencyBuckets
        MetricsSystem.bootstrap(factory)
        PushMetrics.shared.buildInfo(version: version, commit: commit)
        PushMetrics.shared.registerKnownSeries()
        return registry
    }
}
