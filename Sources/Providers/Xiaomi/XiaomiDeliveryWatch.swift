import Synchronization

/// When an app last had a regId accepted, shared by the app's lanes (one per scheduler thread): a request whose
/// every regId Xiaomi names invalid pauses the app only while it has delivered nothing for a while
/// (`XiaomiAnswerClassifier`). Starts as "never": after a restart the first such request pauses the app until a
/// probe is accepted, as a misconfigured app would be.
public final class XiaomiDeliveryWatch: Sendable {
    private let lastDeliveredMillis = Atomic<Int64>(.min)

    public init() {}

    /// A request had at least one regId accepted at `nowMillis`.
    func delivered(nowMillis: Int64) {
        lastDeliveredMillis.max(nowMillis, ordering: .relaxed)
    }

    /// Whether a regId was accepted within `windowMillis` before `nowMillis`.
    func deliveredRecently(nowMillis: Int64, windowMillis: Int64) -> Bool {
        let last = lastDeliveredMillis.load(ordering: .relaxed)
        guard last != .min else { return false }
        let (since, overflow) = nowMillis.subtractingReportingOverflow(last)
        return !overflow && since < windowMillis
    }
}
