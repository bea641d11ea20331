/// Final outcomes per token counted by provider, app topic, outcome and reason, where each message's topic is
/// known (the acknowledging side's `OutcomeLedger`), then handed to `PushMetrics.notifications(_:)` once per
/// batch: one series update per distinct key, not one per token.
public struct OutcomeTally: Sendable {
    public struct Key: Hashable, Sendable {
        public var provider: PushProvider
        /// The message's app topic as the producer sent it (`PushMetrics` maps it to a bounded label).
        public var app: String
        public var outcome: String
        public var reason: String

        public init(provider: PushProvider, app: String, outcome: String, reason: String) {
            self.provider = provider
            self.app = app
            self.outcome = outcome
            self.reason = reason
        }
    }

    public private(set) var counts: [Key: Int] = [:]
    /// The key counted last and how many times in a row: a batch's tokens mostly share one, so most tokens
    /// cost a comparison instead of a hash.
    private var run: (key: Key, count: Int)?

    public init() {}

    public var isEmpty: Bool { counts.isEmpty && run == nil }

    public mutating func add(provider: PushProvider, app: String, outcome: String, reason: String, count: Int = 1) {
        let key = Key(provider: provider, app: app, outcome: outcome, reason: reason)
        if let current = run, current.key == key {
            run = (key, current.count + count)
            return
        }
        closeRun()
        run = (key, count)
    }

    /// Everything counted since the last call; the tally starts again empty.
    public mutating func take() -> [Key: Int] {
        closeRun()
        defer { counts = [:] }
        return counts
    }

    private mutating func closeRun() {
        guard let current = run else { return }
        counts[current.key, default: 0] += current.count
        run = nil
    }
}
