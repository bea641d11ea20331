import PushCore
import QueueProtocol
import RedisClient

extension RedisConnection {
    public func lpush(_ key: String, _ values: [String]) async throws {
        guard !values.isEmpty else { return }
        try await execute(["LPUSH", key] + values)
    }

    public func strings(_ key: String) async throws -> [String] {
        (try await execute(["LRANGE", key, "0", "-1"]).array ?? []).compactMap(\.string)
    }

    public func length(_ key: String) async throws -> Int {
        Int(try await execute(["LLEN", key]).integer ?? -1)
    }

    /// How many elements a worker holds claimed (its processing hash).
    public func claimedCount(_ key: String) async throws -> Int {
        Int(try await execute(["HLEN", key]).integer ?? -1)
    }

    /// The elements a worker holds claimed, oldest claim first.
    public func claimedStrings(_ key: String) async throws -> [String] {
        let flat = (try await execute(["HGETALL", key]).array ?? []).compactMap(\.string)
        let pairs = stride(from: 0, to: flat.count - 1, by: 2).map { (UInt64(flat[$0]) ?? 0, flat[$0 + 1]) }
        return pairs.sorted { $0.0 < $1.0 }.map(\.1)
    }

    /// How many times Redis has run `command` (INFO commandstats).
    public func calls(of command: String) async throws -> Int {
        let info = try await execute(["INFO", "commandstats"]).string ?? ""
        for line in info.split(whereSeparator: \.isNewline) where line.hasPrefix("cmdstat_\(command):calls=") {
            return Int(line.dropFirst("cmdstat_\(command):calls=".count).prefix { $0.isNumber }) ?? 0
        }
        return 0
    }
}
