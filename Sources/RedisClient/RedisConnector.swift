import PushCore

/// Makes the Redis connection that `redis.*` asks for, in one place for the worker and the tools:
/// the primary Sentinel names (`redis.sentinel`), a connection that follows one shard's slot across a
/// Redis Cluster (`redis.shards`), or a plain connection to `redis.url`.
public enum RedisConnector {
    /// - Parameter shard: the key set's prefix (hash-tagged with shards: its slot is the connection's).
    public static func connection(_ redis: RedisSettings, shard: String, name: String,
                                  socketTimeout: Duration = .seconds(5)) -> any RedisCommands {
        if redis.sentinel.isEnabled {
            return SentinelConnection(url: redis.url, sentinel: redis.sentinel, name: name, caFile: redis.caFile, socketTimeout: socketTimeout)
        }
        if !redis.shards.isEmpty {
            return SlotConnection(seeds: redis.seeds, key: shard, name: name, caFile: redis.caFile, socketTimeout: socketTimeout)
        }
        return RedisConnection(url: redis.url, name: name, caFile: redis.caFile, socketTimeout: socketTimeout)
    }
}
