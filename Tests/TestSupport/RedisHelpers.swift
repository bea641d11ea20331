import PushCore

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

    /// How many times Redis has run `command` (INFO commandstats).
    public func calls(of command: String) async throws -> Int {
        let info = try await execute(["INFO", "commandstats"]).string ?? ""
        for line in info.split(whereSeparator: \.isNewline) where line.hasPrefix("cmdstat_\(command):calls=") {
            return Int(line.dropFirst("cmdstat_\(command):calls=".count).prefix { $0.isNumber }) ?? 0
        }
        return 0
    }
}
