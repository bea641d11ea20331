import QueueProtocol
import RedisClient
import TestSupport

/// Queues `perShard` one-token messages on each shard: tokens `<tokenPrefix><shard>…<n>`, ids `<tokenPrefix><shard>-<n>`.
func fill(_ clients: [SlotConnection], _ keys: [RedisKeys], perShard: Int, tokenPrefix: String) async throws {
    for (index, client) in clients.enumerated() {
        try await client.execute(["LPUSH", keys[index].queue] + (0..<perShard).map { n in
            messageJSON(id: "\(tokenPrefix)\(index)-\(n)", tokens: [token("\(tokenPrefix)\(index)", n)])
        })
    }
}

/// Waits until no shard has anything queued or claimed by any of `workers`. The test's own connections live
/// through the failovers the test causes: a connection error (the node it asked just died) means "not yet",
/// and the connection asks the cluster for its topology again before its next command.
func waitUntilShardsDrained(_ clients: [SlotConnection], keys: [RedisKeys], workers: [String],
                            timeout: Duration) async throws {
    try await eventually(timeout: timeout) {
        do {
            for (index, client) in clients.enumerated() {
                let queued = try await client.execute(["LLEN", keys[index].queue]).integer ?? -1
                var held = 0
                for worker in workers { held += Int(try await client.execute(["HLEN", keys[index].processing(worker: worker)]).integer ?? -1) }
                if queued != 0 || held != 0 { return false }
            }
            return true
        } catch RedisError.connection {
            return false
        }
    }
}

/// How many times the emulator accepted (200) each token.
func acceptances(by apns: EmulatorStandIn) -> [String: Int] {
    var delivered: [String: Int] = [:]
    for (token, status) in apns.answered() where status == 200 { delivered[token, default: 0] += 1 }
    return delivered
}
