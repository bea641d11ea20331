import Logging
import PushCore
import QueueProtocol
import RedisClient

/// Shares each app's last delivery with the fleet (`RedisKeys.lastDeliveries`), so that the refusal rule
/// (`AllTokensRefusedRule`) asks whether the app delivered anything in 10 minutes anywhere, not on this worker: a
/// worker just started, or one that sends little for the app, would otherwise take a dead token for a refusal of
/// the app. Every `interval`: one HGETALL, whose later times go into this worker's records, and one HSET of the
/// records whose own time is later than the fleet's. Times are wall milliseconds; a lost write costs at most an
/// interval of accuracy.
public struct FleetDeliverySync: Sendable {
    let connection: any RedisCommands
    let key: String
    let logger: Logger
    let records: @Sendable () -> [String: AppDeliveryRecord]
    let record: @Sendable (String) -> AppDeliveryRecord
    static let interval = Duration.seconds(5)

    /// `records`: this worker's records by field (`AppDeliveryRecord.fleetKey`), and `record` the one of a field
    /// (made if need be): the process's by default.
    public init(connection: any RedisCommands, keys: RedisKeys, logger: Logger,
                records: @escaping @Sendable () -> [String: AppDeliveryRecord] = { AppDeliveryRecord.all },
                record: @escaping @Sendable (String) -> AppDeliveryRecord = { AppDeliveryRecord.of(fleetKey: $0) }) {
        self.connection = connection
        self.key = keys.lastDeliveries
        self.logger = logger
        self.records = records
        self.record = record
    }

    /// Until cancelled (the worker's shutdown).
    public func run() async {
        var failing = false
        while !Task.isCancelled {
            do {
                try await pass()
                failing = false
            } catch {
                if !failing { logger.notice("cannot share the apps' last deliveries with the fleet yet; retrying", metadata: ["error": "\(error)"]) }
                failing = true
            }
            // No last pass at shutdown: with Redis unreachable it would hold the shutdown for a socket timeout, and
            // what it would add is at most one interval of accuracy.
            guard (try? await Task.sleep(for: Self.interval)) != nil else { return }
        }
    }

    /// One exchange with Redis (the worker makes one before its lanes start, so that their first answers know the
    /// fleet's last deliveries).
    public func pass() async throws {
        let flat = (try await connection.execute(["HGETALL", key]).array ?? []).compactMap(\.string)
        var fleet: [String: Int64] = [:]
        for index in stride(from: 0, to: flat.count - 1, by: 2) {
            guard let millis = Int64(flat[index + 1]) else { continue }
            fleet[flat[index]] = millis
            record(flat[index]).mergeFleetDelivery(atMillis: millis)
        }
        var newer: [String] = []
        for (field, record) in records() {
            if let own = record.lastDeliveredMillis, own > (fleet[field] ?? .min) { newer += [field, String(own)] }
        }
        guard !newer.isEmpty else { return }
        _ = try await connection.execute(["HSET", key] + newer)
    }
}
