import PushCore
import RedisClient

/// Runs the protocol's scripts with EVALSHA, so a script's text crosses the network once per Redis node.
/// A node that does not have it (a restart emptied its cache; a node that joined the cluster and imports
/// the slot during a move) answers NOSCRIPT, and the call is made again with EVAL and the text: EVAL runs
/// on whichever node the command's own redirection reaches and caches the script there. (Loading it with
/// SCRIPT LOAD would reach the slot's stable owner instead, not the node an ASK redirection leads to.)
final class ScriptRunner: Sendable {
    let connection: any RedisCommands
    private let digests = Locked<[String: String]>([:])

    init(connection: any RedisCommands) { self.connection = connection }

    func run(_ script: Script, keys: [String], arguments: [[UInt8]]) async throws -> RedisReply {
        var tail: [[UInt8]] = [Array(String(keys.count).utf8)]
        tail.reserveCapacity(1 + keys.count + arguments.count)
        tail += keys.map { Array($0.utf8) }
        tail += arguments
        do {
            return try await connection.execute(bytes: [Array("EVALSHA".utf8), Array(script.digest.utf8)] + tail)
        } catch RedisError.server(let text) where text.hasPrefix("NOSCRIPT") {
            return try await connection.execute(bytes: [Array("EVAL".utf8), Array(script.source.utf8)] + tail)
        }
    }
}
