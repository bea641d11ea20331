/// The effective configuration as people may see it (check-config, logs, ServiceLifecycle's own
/// description of the service): every key with its value, secrets as `***`, never a password.
extension WorkerConfiguration: CustomStringConvertible {
    public var description: String { summaryLines.joined(separator: "\n") }

    public var summaryLines: [String] {
        var lines = [
            "worker.id: \(workerID.isEmpty ? "(hostname-pid)" : workerID)",
            "redis.url: \(RedisURL.describe(redis.seeds))",
            "redis.sentinel.master: \(redis.sentinel.isEnabled ? redis.sentinel.master : "(none: no Sentinel)")",
            "redis.sentinel.nodes: \(redis.sentinel.nodes.isEmpty ? "(none)" : redis.sentinel.nodes.joined(separator: ","))",
            "redis.sentinel.username: \(redis.sentinel.username ?? "(none: the default user)")",
            "redis.sentinel.password: \(redis.sentinel.password == nil ? "(none)" : "***")",
            "redis.ca_file: \(redis.caFile.isEmpty ? "(system CAs)" : redis.caFile)",
            "redis.prefix: \(redis.prefix)",
            "redis.shards: \(redis.shards.isEmpty ? "(none: the prefix alone)" : redis.shards.joined(separator: ","))",
            "redis.heartbeat_ttl_ms: \(redis.heartbeatTTLMillis)",
            "redis.wait_replicas: \(redis.waitReplicas == 0 ? "0 (acknowledgements do not wait for replicas)" : "\(redis.waitReplicas), at most \(redis.waitTimeoutMillis) ms")",
            "collector.window_ms: \(collector.windowMillis)",
            "collector.batch: private \(collector.batch.private), group \(collector.batch.group), system \(collector.batch.system)",
            "collector.max_in_flight: \(collector.maxInFlight)",
            "collector.max_in_flight_bytes: \(collector.maxInFlightBytes)",
            "collector.max_element_bytes: \(collector.maxElementBytes)",
            "collector.bulk_share: \(collector.bulkShare)",
            "recovery.max_deliveries: \(recovery.maxDeliveries)",
        ]
        // Each provider's block is its module's to describe (`ProviderApps.summaryLines`): check-config adds them.
        lines += [
            "filter.words_file: \(filter.wordsFile.isEmpty ? "(off)" : filter.wordsFile)",
            "filter.allow_file: \(filter.allowFile.isEmpty ? "(none)" : filter.allowFile)",
            "filter.fields: \(filter.fields.isEmpty ? "(none)" : filter.fields.joined(separator: ","))",
            "filter.audit_cap: \(filter.auditCap)",
            "retry: \(retry.maxAttempts) attempts, \(retry.baseDelayMillis)..\(retry.maxDelayMillis) ms",
            "metrics.listen: \(metricsListen.isEmpty ? "(off)" : metricsListen)",
            "receipts.listen: \(receiptsListen.isEmpty ? "(off)" : receiptsListen)",
            "shutdown.timeout_s: \(shutdown.timeoutSeconds)",
        ]
        return lines
    }
}
