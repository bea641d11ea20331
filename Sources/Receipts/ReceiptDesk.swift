import Logging
import ProviderKit
import PushCore
import QueueProtocol

/// What the receipts listener does with one request, without the HTTP server around it (so it can be tested on its
/// own): route by the path's provider to that module's `ReceiptReader`, count every receipt and every refusal, and
/// write the dead tokens to the feedback list once each (`ReceiptFeedback`). Knows no service by name.
public final class ReceiptDesk: Sendable {
    /// The largest body read: a service sends at most some hundreds of statuses or a few thousand targets a call, far below.
    public static let maxBodyBytes = 1 << 20

    let readers: [String: any ReceiptReader]
    let feedback: ReceiptFeedback
    let metrics: any ReceiptCounting
    let logger: Logger
    let nowMillis: @Sendable () -> Int64
    private let refusalLog = RefusalLog()

    public init(readers: [any ReceiptReader], feedback: ReceiptFeedback, metrics: any ReceiptCounting = ReceiptMetrics.shared, logger: Logger,
                nowMillis: @escaping @Sendable () -> Int64 = { WallClock.nowMillis() }) {
        self.readers = Dictionary(readers.map { ($0.provider.rawValue, $0) }, uniquingKeysWith: { first, _ in first })
        self.feedback = feedback
        self.metrics = metrics
        self.logger = logger
        self.nowMillis = nowMillis
        for reader in readers {
            metrics.registerKnownSeries(provider: reader.provider.rawValue, apps: reader.apps,
                                        statuses: ReceiptStatus.allCases.map(\.rawValue),
                                        reasons: ReceiptRefusal.Reason.allCases.map(\.rawValue))
        }
    }

    /// The providers whose receipts are read.
    public var providers: [String] { readers.keys.sorted() }

    /// Answers one request whose body was read whole (at most `maxBodyBytes`).
    public func answer(method: String, path: String, headers: [(name: String, value: String)], body: [UInt8]) async -> ReceiptAnswer {
        guard let route = ReceiptRoute(path: path) else { return .refused(404, "not found; receipts come to POST /receipts/<provider>") }
        guard method == "POST" else { return .refused(405, "only POST") }
        // Only a registered provider's name becomes a label: a scan of invented paths adds no series.
        guard let provider = PushProvider(rawValue: route.provider) else { return .refused(404, "no such provider") }
        guard let reader = readers[provider.rawValue] else {
            return refuse(provider.rawValue, ReceiptRefusal(.unknownApp, "no app of \(provider.rawValue) takes receipts"))
        }
        let request = ReceiptRequest(pathRemainder: route.remainder, headers: headers, body: body, nowMillis: nowMillis())
        switch reader.read(request) {
        case .refused(let refusal):
            return refuse(provider.rawValue, refusal)
        case .accepted(let receipts, let skipped):
            do {
                try await record(receipts, provider: provider, at: request.nowMillis)
            } catch {
                // The service sends it again later; what was written already is not written twice.
                logger.error("receipts: cannot write to Redis; the service is asked to send again", metadata: [
                    "provider": "\(provider.rawValue)", "error": "\(error)",
                ])
                return .refused(503, "try again")
            }
            for refusal in skipped { _ = refuse(provider.rawValue, refusal) }
            return .accepted
        }
    }

    /// A body over `maxBodyBytes`, refused without reading it: counted for the path's provider when it names one.
    public func tooLarge(path: String) -> ReceiptAnswer {
        let refusal = ReceiptRefusal(.tooLarge, "a body over \(Self.maxBodyBytes) bytes")
        guard let route = ReceiptRoute(path: path), let provider = PushProvider(rawValue: route.provider) else {
            return .refused(refusal.status, "too large")
        }
        return refuse(provider.rawValue, refusal)
    }

    /// Ends the Redis connection (the listener has stopped).
    public func close() async { await feedback.connection.close() }

    private func record(_ receipts: [Receipt], provider: PushProvider, at nowMillis: Int64) async throws {
        let dead = receipts.filter { $0.status == .dead }.map { receipt in
            ReceiptFeedback.Entry(provider: provider, app: receipt.app, token: receipt.token, messageID: receipt.messageID,
                                  timestampMillis: receipt.timestampMillis.flatMap { $0 > 0 ? $0 : nil } ?? nowMillis)
        }
        var writtenByApp: [String: Int] = [:]
        for (app, entries) in Dictionary(grouping: dead, by: \.app) {
            writtenByApp[app] = try await feedback.write(entries)
        }
        // Counted once written: a request answered 503 is sent again, and counted then.
        for ((app, status), count) in Dictionary(grouping: receipts, by: { ReceiptKey(app: $0.app, status: $0.status) })
            .map({ (($0.key.app, $0.key.status), $0.value.count) }) {
            metrics.received(provider: provider.rawValue, app: app, status: status.rawValue, count: count)
        }
        for (app, count) in writtenByApp { metrics.feedbackWritten(provider: provider.rawValue, app: app, count: count) }
    }

    private func refuse(_ provider: String, _ refusal: ReceiptRefusal) -> ReceiptAnswer {
        metrics.refused(provider: provider, reason: refusal.reason.rawValue, count: 1)
        if refusalLog.shouldLog(provider: provider, reason: refusal.reason.rawValue) {
            logger.warning("receipts: refused a callback (further ones of this kind are not logged for a minute)", metadata: [
                "provider": "\(provider)", "reason": "\(refusal.reason.rawValue)", "detail": "\(refusal.detail)",
            ])
        }
        return .refused(refusal.status, refusal.reason.rawValue)
    }

    private struct ReceiptKey: Hashable {
        let app: String
        let status: ReceiptStatus
    }
}

/// One log line per provider and refusal reason a minute: a flood of forged callbacks is counted in full, but does not
/// flood the log.
final class RefusalLog: Sendable {
    private let lastLogged = Locked<[String: ContinuousClock.Instant]>([:])
    static let interval = Duration.seconds(60)

    func shouldLog(provider: String, reason: String) -> Bool {
        let now = ContinuousClock.now
        return lastLogged.withLock { last in
            let key = provider + " " + reason
            if let at = last[key], now - at < Self.interval { return false }
            last[key] = now
            return true
        }
    }
}
