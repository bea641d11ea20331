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

    /// Redis's own CPU time so far (user + system), in microseconds: INFO cpu.
    public func cpuMicros() async throws -> Double {
        let info = try await execute(["INFO", "cpu"]).string ?? ""
        var total = 0.0
        for line in info.split(whereSeparator: \.isNewline) {
            for field in ["used_cpu_sys:", "used_cpu_user:"] where line.hasPrefix(field) {
                total += Double(line.dropFirst(field.count).trimmingCharacters(in: .whitespaces)) ?? 0
            }
        }
        return total * 1_000_000
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
