import PushCore

/// Makes the Redis connection that `redis.*` asks for, in one place for the worker and the tools:
/// the primary Sentinel names (`redis.sentinel`), a connection that follows one shard's slot across a
/// Redis Cluster (`redis.shards`), or a plain connection to `redis.url`.
public enum RedisConnector {
    /// The cluster topology every connection of a process shares (`redis.shards` set: a Redis Cluster, or one
    /// Redis holding every shard); nil when connections need none. Closed with the last connection using it.
    public static func clusterMap(_ redis: RedisSettings, name: String, socketTimeout: Duration = .seconds(5)) -> ClusterMap? {
        guard !redis.sentinel.isEnabled, !redis.shards.isEmpty else { return nil }
        return ClusterMap(seeds: redis.seeds, name: name, caFile: redis.caFile, socketTimeout: socketTimeout)
    }

    /// - Parameters:
    ///   - shard: the key set's prefix (hash-tagged with shards: its slot is the connection's).
    ///   - map: the process's shared cluster topology (`clusterMap`); nil: the connection keeps one of its own.
    public static func connection(_ redis: RedisSettings, shard: String, name: String, map: ClusterMap? = nil,
                                  socketTimeout: Duration = .seconds(5)) -> any RedisCommands {
        if redis.sentinel.isEnabled {
            return SentinelConnection(url: redis.url, sentinel: redis.sentinel, name: name, caFile: redis.caFile, socketTimeout: socketTimeout)
        }
        if !redis.shards.isEmpty {
            if let map {
                return SlotConnection(map: map, key: shard, name: name, caFile: redis.caFile, socketTimeout: socketTimeout)
            }
            return SlotConnection(seeds: redis.seeds, key: shard, name: name, caFile: redis.caFile, socketTimeout: socketTimeout)
        }
        return RedisConnection(url: redis.url, name: name, caFile: redis.caFile, socketTimeout: socketTimeout)
    }
}
