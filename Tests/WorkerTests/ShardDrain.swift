import QueueProtocol
import RedisClient
import TestSupport

/// Waits until no shard has anything queued or claimed by any of `workers`.
func waitUntilShardsDrained(_ clients: [SlotConnection], keys: [RedisKeys], workers: [String],
                            timeout: Duration) async throws {
    try await eventually(timeout: timeout) {
        for (index, client) in clients.enumerated() {
            let queued = try await client.execute(["LLEN", keys[index].queue]).integer ?? -1
            var held = 0
            for worker in workers { held += Int(try await client.execute(["HLEN", keys[index].processing(worker: worker)]).integer ?? -1) }
            if queued != 0 || held != 0 { return false }
        }
        return true
    }
}

/// How many times the emulator accepted (200) each token.
func acceptances(by apns: EmulatorStandIn) -> [String: Int] {
    var delivered: [String: Int] = [:]
    for (token, status) in apns.answered() where status == 200 { delivered[token, default: 0] += 1 }
    return delivered
}
