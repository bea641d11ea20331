import Logging
import ProviderKit
import PushCore
import Pusher
import QueueProtocol
import Receipts
import RedisClient

/// The receipts listener as the worker starts it, when `receipts.listen` is set: each provider module's reader (its
/// apps' receipt secrets read now: a missing file stops the start), a Redis connection of its own on the first shard,
/// bound before the pipeline starts.
enum ReceiptsListener {
    static func start(_ configuration: WorkerConfiguration, providers: [any ProviderApps], logger: Logger) async throws -> ReceiptsServer? {
        guard let address = try ListenAddress.parse(configuration.receiptsListen, key: "receipts.listen") else { return nil }
        let readers = try providers.compactMap { try $0.receiptReader() }
        if readers.isEmpty {
            logger.warning("configuration: receipts.listen is set, but no app has receipt settings: every callback is refused (docs/vendors.md, \"Receipts\")")
        }
        let prefix = configuration.redis.prefixes[0]
        let connection = RedisConnector.connection(configuration.redis, shard: prefix, name: "receipts")
        let feedback = ReceiptFeedback(connection: connection, keys: RedisKeys(prefix: prefix), feedbackMax: configuration.retention.feedbackMax)
        let desk = ReceiptDesk(readers: readers, feedback: feedback, logger: logger)
        do {
            return try await ReceiptsServer.bind(address, desk: desk, logger: logger)
        } catch {
            await desk.close()
            throw error
        }
    }
}
