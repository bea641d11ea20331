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
            "apns.endpoint: \(apns.endpoint.baseURL)",
            "apns.ca_file: \(apns.caFile.isEmpty ? "(system CAs)" : apns.caFile)",
            "apns.transport: \(apns.transport)",
            "apns.connections: \(apns.connections)",
            "apns.max_connections: \(apns.maxConnections)",
            "apns.ping_interval_ms: \(apns.pingIntervalMillis)",
            "apns.transport_threads: \(apns.transportThreads == 0 ? "(one per two cores; libcurl: one per core)" : String(apns.transportThreads))",
            "apns.request_timeout_ms: \(apns.requestTimeoutMillis)",
            "apns.credential_probe_max_ms: \(apns.credentialProbeMaxMillis)",
        ]
        for (index, app) in apns.apps.enumerated() {
            switch app.credential {
            case .token(let team, let key, let file):
                lines.append("apns.apps.\(index): \(app.topic), token auth, team_id \(team), key_id \(key), key_file \(file)")
            case .certificate(let file, let password):
                lines.append("apns.apps.\(index): \(app.topic), certificate \(file)\(password.isEmpty ? "" : ", cert_password ***")")
            }
        }
        lines += [
            "filter.words_file: \(filter.wordsFile.isEmpty ? "(off)" : filter.wordsFile)",
            "filter.allow_file: \(filter.allowFile.isEmpty ? "(none)" : filter.allowFile)",
            "filter.fields: \(filter.fields.isEmpty ? "(none)" : filter.fields.joined(separator: ","))",
            "filter.audit_cap: \(filter.auditCap)",
            "retry: \(retry.maxAttempts) attempts, \(retry.baseDelayMillis)..\(retry.maxDelayMillis) ms",
            "metrics.listen: \(metricsListen.isEmpty ? "(off)" : metricsListen)",
            "shutdown.timeout_s: \(shutdown.timeoutSeconds)",
        ]
        return lines
    }
}
