import PushCore
import Synchronization

/// A connection for the keys of one Redis Cluster hash slot (one shard of the queue: every key of a shard
/// carries the same hash tag). It starts at the configured node and follows the cluster's redirections:
/// MOVED (the slot lives elsewhere now: go there from now on), ASK (the slot is being migrated and this key
/// is already on the target: send ASKING and the command there, once), TRYAGAIN (a multi-key command while
/// the slot's keys are split between two nodes: wait and retry) and CLUSTERDOWN, each command on its own. Against a Redis that is not
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
    static let maxRedirections = 24

    public init(url: RedisURL, name: String, caFile: String = "", socketTimeout: Duration = .seconds(5)) {
        self.seed = url
        self.name = name
        self.caFile = caFile
        self.socketTimeout = socketTimeout
    }

    /// Sends the commands and returns their replies in order. Each command answered with a redirection is
    /// sent again on its own, where its own answer points (MOVED: the slot's owner from now on; ASK: the
    /// importing node, once, after ASKING; TRYAGAIN/CLUSTERDOWN: the same place, after a pause). A command
    /// that ran (any other reply) is never sent again, so a pipeline that meets a slot half-way between two
    /// nodes runs every write exactly once and creates no key on the node that does not own it.
    public func pipeline(_ commands: [[[UInt8]]]) async throws -> [RedisReply] {
        var replies = [RedisReply?](repeating: nil, count: commands.count)
        // Commands still to run, each with the node an ASK sent it to (nil: the slot's owner).
        var pending: [(index: Int, ask: String?)] = commands.indices.map { ($0, nil) }
        var waits = 0
        for _ in 0..<Self.maxRedirections {
            var retry: [(index: Int, ask: String?)] = []
            var mustWait = false
            // One round trip per destination, in the commands' order.
            var destinations: [String?] = []
            for entry in pending where !destinations.contains(entry.ask) { destinations.append(entry.ask) }
            for destination in destinations {
                let group = pending.filter { $0.ask == destination }
                let node = destination ?? state.withLock { $0.target } ?? "\(seed.host):\(seed.port)"
                let sent = destination == nil
                    ? group.map { commands[$0.index] }
                    : group.flatMap { [[Array("ASKING".utf8)], commands[$0.index]] }
                let answers: [RedisReply]
                do {
                    let raw = try await connection(to: node).pipeline(sent)
                    answers = destination == nil ? raw : stride(from: 1, to: raw.count, by: 2).map { raw[$0] }
                } catch {
                    // The node may be gone: start again from the configured one, which redirects.
                    state.withLock { $0.target = nil }
                    throw error
                }
                for (entry, answer) in zip(group, answers) {
                    switch Self.redirection(answer) {
                    case nil:
                        replies[entry.index] = answer
                    case .moved(let owner):
                        state.withLock { $0.target = owner }
                        retry.append((entry.index, nil))
                    case .ask(let importing):
                        retry.append((entry.index, importing))
                    case .tryAgain:
                        mustWait = true
                        retry.append((entry.index, entry.ask))
                    }
                }
            }
            if retry.isEmpty { return replies.map { $0 ?? .null } }
            pending = retry.sorted { $0.index < $1.index }
            if mustWait {
                // A move of a slot's keys takes a while: 20 ms, doubling to 320 ms (about 5 s in all).
                try await Task.sleep(for: .milliseconds(20 << min(waits, 4)))
                waits += 1
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
