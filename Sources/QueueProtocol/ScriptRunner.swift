import RedisClient
import Synchronization

/// Runs the protocol's scripts on one connection with EVALSHA, loading each once (SCRIPT LOAD) and again
/// after Redis answers NOSCRIPT (its script cache is empty after a restart).
final class ScriptRunner: Sendable {
    let connection: any RedisCommands
    private let digests = Mutex<[String: String]>([:])

    init(connection: any RedisCommands) { self.connection = connection }

    func run(_ script: Script, keys: [String], arguments: [[UInt8]]) async throws -> RedisReply {
        for attempt in 0..<2 {
            let digest = try await digest(of: script, reload: attempt > 0)
            var command: [[UInt8]] = [Array("EVALSHA".utf8), Array(digest.utf8), Array(String(keys.count).utf8)]
            command.reserveCapacity(command.count + keys.count + arguments.count)
            command += keys.map { Array($0.utf8) }
            command += arguments
            do {
                return try await connection.execute(bytes: command)
            } catch RedisError.server(let text) where text.hasPrefix("NOSCRIPT") {
                continue
            }
        }
        throw RedisError.server("NOSCRIPT: script \(script.name) could not be loaded")
    }

    private func digest(of script: Script, reload: Bool) async throws -> String {
        if !reload, let known = digests.withLock({ $0[script.name] }) { return known }
        let reply = try await connection.execute(["SCRIPT", "LOAD", script.source])
        guard let digest = reply.string else { throw RedisError.unexpectedReply("SCRIPT LOAD: \(reply)") }
        digests.withLock { $0[script.name] = digest }
        return digest
    }
}
