import PushCore

/// The receipts listener's counts as a test reads them back (`ReceiptCounting`), keyed `provider/app/status`,
/// `provider/reason` and `provider/app`.
public final class ReceiptCounts: ReceiptCounting {
    private let counts = Locked<[String: Int]>([:])

    public init() {}

    public func received(provider: String, app: String, status: String, count: Int) { add("received \(provider)/\(app)/\(status)", count) }
    public func refused(provider: String, reason: String, count: Int) { add("refused \(provider)/\(reason)", count) }
    public func feedbackWritten(provider: String, app: String, count: Int) { add("feedback \(provider)/\(app)", count) }
    public func registerKnownSeries(provider: String, apps: [String], statuses: [String], reasons: [String]) {}

    public func received(_ provider: String, _ app: String, _ status: String) -> Int { value("received \(provider)/\(app)/\(status)") }
    public func refused(_ provider: String, _ reason: String) -> Int { value("refused \(provider)/\(reason)") }
    public func feedback(_ provider: String, _ app: String) -> Int { value("feedback \(provider)/\(app)") }

    private func add(_ key: String, _ count: Int) { counts.withLock { $0[key, default: 0] += count } }
    private func value(_ key: String) -> Int { counts.withLock { $0[key] ?? 0 } }
}
