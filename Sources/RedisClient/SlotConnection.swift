import PushCore
import Synchronization

/// A connection for the keys of one Redis Cluster hash slot (one shard of the queue: every key of a shard
/// carries the same hash tag). It starts at the configured node and follows the cluster's redirections:
/// MOVED (the slot lives elsewhere now: go there from now on), ASK (the slot is being migrated and this key
/// is already on the target: send ASKING and the command there, once), TRYAGAIN (a multi-key command while
/// the slot's keys are split between two nodes: wait and retry) and CLUSTERDOWN. Against a Redis that is not
/// a cluster, it is a plain connection. Each node gets a connection (and thread) of its own.
public final class SlotConnection: RedisCommands {
    private let seed: RedisURL
    private let name: String
    private let caFile: String
    private let socketTimeout: Duration
    private struct State {
        var target: String? = nil  // host:port of the node that owns the slot, nil for the seed
        var nodes: [String: RedisConnection] = [:]
    }
    private let state = Mutex(State())

    /// How often one command follows a redirection or waits out TRYAGAIN before the error is returned.
    static let maxRedirections = 50

    public init(url: RedisURL, name: String, caFile: String = "", socketTimeout: Duration = .seconds(5)) {
        self.seed = url
        self.name = name
        self.caFile = caFile
        self.socketTimeout = socketTimeout
    }

    public func pipeline(_ commands: [[[UInt8]]]) async throws -> [RedisReply] {
        var asking: String?
        for _ in 0..<Self.maxRedirections {
            let node = asking ?? state.withLock { $0.target } ?? "\(seed.host):\(seed.port)"
            let connection = self.connection(to: node)
            let sent = asking == nil ? commands : commands.flatMap { [[Array("ASKING".utf8)], $0] }
            let replies: [RedisReply]
            do {
                replies = try await connection.pipeline(sent)
            } catch {
                // The node may be gone: start again from the configured one, which redirects.
                state.withLock { $0.target = nil }
                throw error
            }
            let answers = asking == nil ? replies : stride(from: 1, to: replies.count, by: 2).map { replies[$0] }
            asking = nil
            guard let redirect = answers.lazy.compactMap(Self.redirection).first else { return answers }
            switch redirect {
            case .moved(let node):
                state.withLock { $0.target = node }
            case .ask(let node):
                asking = node
            case .tryAgain:
                try await Task.sleep(for: .milliseconds(20))
            }
        }
        throw RedisError.server("TRYAGAIN: slot still moving after \(Self.maxRedirections) tries")
    }

    public func close() async {
        let connections = state.withLock { state -> [RedisConnection] in
            let all = Array(state.nodes.values)
            state.nodes = [:]
            return all
        }
        for connection in connections { await connection.close() }
    }

    private func connection(to node: String) -> RedisConnection {
        state.withLock { state in
            if let existing = state.nodes[node] { return existing }
            var url = seed
            if let colon = node.lastIndex(of: ":"), let port = Int(node[node.index(after: colon)...]) {
                url.host = String(node[..<colon])
                url.port = port
            }
            let fresh = RedisConnection(url: url, name: "\(name)-\(state.nodes.count)", caFile: caFile, socketTimeout: socketTimeout)
            state.nodes[node] = fresh
            return fresh
        }
    }

    enum Redirection { case moved(String), ask(String), tryAgain }

    /// `MOVED 3999 127.0.0.1:6381`, `ASK 3999 127.0.0.1:6381`, `TRYAGAIN ...`, `CLUSTERDOWN ...`.
    static func redirection(_ reply: RedisReply) -> Redirection? {
        guard case .error(let text) = reply else { return nil }
        let parts = text.split(separator: " ")
        switch parts.first {
        case "MOVED" where parts.count >= 3: return .moved(String(parts[2]))
        case "ASK" where parts.count >= 3: return .ask(String(parts[2]))
        case "TRYAGAIN", "CLUSTERDOWN": return .tryAgain
        default: return nil
        }
    }
}
