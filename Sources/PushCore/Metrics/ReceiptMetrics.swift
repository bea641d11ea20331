import CoreMetrics

/// The receipts listener's series (docs/metrics.md): `push_receipts_total{provider, app, status}` for every status a
/// believed receipt reports, `push_receipts_refused_total{provider, reason}` for every request (or status of one) not
/// believed, and `push_receipts_feedback_total{provider, app}` for the dead tokens written to the feedback list (a
/// receipt sent again is not counted twice there). Apps are those whose secrets proved the receipts (configured
/// topics); statuses and reasons are small fixed sets, so every label stays bounded.
public final class ReceiptMetrics: ReceiptCounting {
    public static let shared = ReceiptMetrics()

    private let receipts = LabelledSeries<Counter> { Counter(label: "push_receipts_total", dimensions: $0) }
    private let refused = LabelledSeries<Counter> { Counter(label: "push_receipts_refused_total", dimensions: $0) }
    private let feedback = LabelledSeries<Counter> { Counter(label: "push_receipts_feedback_total", dimensions: $0) }

    private init() {}

    public func received(provider: String, app: String, status: String, count: Int = 1) {
        guard count >= 0 else { return }
        receipts.series([("provider", provider), ("app", MetricLabel.reason(app, keep: MetricLabel.topicCharacters)),
                         ("status", status)]).increment(by: count)
    }

    public func refused(provider: String, reason: String, count: Int = 1) {
        guard count >= 0 else { return }
        refused.series([("provider", provider), ("reason", reason)]).increment(by: count)
    }

    public func feedbackWritten(provider: String, app: String, count: Int) {
        guard count >= 0 else { return }
        feedback.series([("provider", provider), ("app", MetricLabel.reason(app, keep: MetricLabel.topicCharacters))]).increment(by: count)
    }

    /// Series made at 0 before the first receipt, so a dashboard's rate reads 0 rather than nothing.
    public func registerKnownSeries(provider: String, apps: [String], statuses: [String], reasons: [String]) {
        for app in apps {
            for status in statuses { received(provider: provider, app: app, status: status, count: 0) }
            feedbackWritten(provider: provider, app: app, count: 0)
        }
        for reason in reasons { refused(provider: provider, reason: reason, count: 0) }
    }
}

/// What the receipts listener counts, as `ReceiptMetrics` records it; a test may pass a recorder of its own to read the
/// counts back without a metrics backend.
public protocol ReceiptCounting: Sendable {
    func received(provider: String, app: String, status: String, count: Int)
    func refused(provider: String, reason: String, count: Int)
    func feedbackWritten(provider: String, app: String, count: Int)
    func registerKnownSeries(provider: String, apps: [String], statuses: [String], reasons: [String])
}
