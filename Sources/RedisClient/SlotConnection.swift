import Logging
import PushCore

/// A connection for the keys of one Redis Cluster hash slot (one shard of the queue: every key of a shard
/// carries the same hash tag). It learns the cluster's topology (`CLUSTER SLOTS`) from any seed or known
/// node that answers, sends each command to the slot's primary, and keeps that topology current: asked
/// again after a MOVED, after a connection error (the other nodes first, so a replica promoted after its
/// primary died is found without the address first given) and every 10 s while in use. It follows the
/// cluster's redirections each command on its own: MOVED (the slot lives elsewhere now: go there from now
/// on), ASK (the slot is being migrated and this key is already on the target: send ASKING and the command
/// there, once), TRYAGAIN (a multi-key command while the slot's keys are split between two nodes: wait and
/// retry) and CLUSTERDOWN. Against a Redis that is not a cluster, it is a plain connection to the first
/// seed. Each node gets a connection (and thread) of its own, closed when the node leaves the topology.
public final class SlotConnection: RedisCommands {
    /// The nodes first given; the first one's password, database and TLS are used for every node.
    private let seeds: [RedisURL]
    private let name: String
    private let caFile: String
    private let socketTimeout: Duration
    private let logger = Logger(label: "push.redis.cluster")

    private struct State {
        /// The slot of the connection's keys: from its key, or from the first MOVED when no key was given.
        var slot: Int?
        /// `host:port` of the slot's primary (topology or last MOVED); nil: the first seed.
        var owner: String?
        /// Every node of the last topology: asked (with the seeds) for the next one.
        var known: [String] = []
        var nodes: [String: RedisConnection] = [:]
        /// nil until a node answered CLUSTER SLOTS; false: not a cluster, or topology not available to us.
        var cluster: Bool?
        /// The topology must be asked before the next command (MOVED, connection error, not asked yet).
        var stale = true
        var refreshedAt: ContinuousClock.Instant?
        /// The node whose connection failed last: asked for the topology after all others.
        var failed: String?
        var made = 0
    }
    private let state: Locked<State>

    /// How often one command follows a redirection or waits out TRYAGAIN before the error is returned.
    static let maxRedirections = 24
    /// How often the topology is asked while the connection is in use: one cheap round trip, so a change
    /// that caused no redirection yet (a replica added, a node removed) is seen.
    static let refreshInterval = Duration.seconds(10)

    /// - Parameters:
    ///   - seeds: nodes of one cluster (or one plain Redis); the first one's credentials apply to all.
    ///   - key: a key of the slot (a shard's hash-tagged prefix, `push:{0}`); nil: learned from the first MOVED.
    public init(seeds: [RedisURL], key: String?, name: String, caFile: String = "", socketTimeout: Duration = .seconds(5)) {
        precondition(!seeds.isEmpty, "a SlotConnection needs at least one address")
        self.seeds = seeds
        self.name = name
        self.caFile = caFile
        self.socketTimeout = socketTimeout
        var initial = State()
        initial.slot = key.map(ClusterSlot.of(key:))
        state = Locked(initial)
    }

    /// One seed, slot learned from the first MOVED (the form used before topologies were known).
    public convenience init(url: RedisURL, name: String, caFile: String = "", socketTimeout: Duration = .seconds(5)) {
        self.init(seeds: [url], key: nil, name: name, caFile: caFile, socketTimeout: socketTimeout)
    }

    /// The node the slot's commands go to now (`host:port`), for tests and logs.
    public var currentNode: String { state.withLock { $0.owner } ?? address(seeds[0]) }

    /// Sends the commands and returns their replies in order. Each command answered with a redirection is
    /// sent again on its own, where its own answer points (MOVED: the slot's owner from now on; ASK: the
    /// importing node, once, after ASKING; TRYAGAIN/CLUSTERDOWN: the same place, after a pause). A command
    /// that ran (any other reply) is never sent again, so a pipeline that meets a slot half-way between two
    /// nodes runs every write exactly once and creates no key on the node that does not own it. A
    /// connection error is thrown (the command may or may not have run: the caller decides what to redo),
    /// and the topology is asked again before the next command.
    public func pipeline(_ commands: [[[UInt8]]]) async throws -> [RedisReply] {
        try await refreshTopologyIfDue()
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
                let node = destination ?? currentNode
                let sent = destination == nil
                    ? group.map { commands[$0.index] }
                    : group.flatMap { [[Array("ASKING".utf8)], commands[$0.index]] }
                let raw = try await send(sent, to: node)
                let answers = destination == nil ? raw : stride(from: 1, to: raw.count, by: 2).map { raw[$0] }
                for (entry, answer) in zip(group, answers) {
                    switch Self.redirection(answer) {
                    case nil:
                        replies[entry.index] = answer
                    case .moved(let owner, let slot):
                        state.withLock { state in
                            state.owner = owner
                            if state.slot == nil { state.slot = slot }
                            // The cluster changed: learn the rest of it before the next command.
                            if state.cluster == true { state.stale = true }
                        }
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

    public func interrupt() {
        state.withLock { state in state.nodes.values.forEach { $0.interrupt() } }
    }

    public func close() async {
        let connections = state.withLock { state -> [RedisConnection] in
            let all = Array(state.nodes.values)
            state.nodes = [:]
            return all
        }
        for connection in connections { await connection.close() }
    }

    // MARK: nodes

    /// Runs commands on one node. A connection error marks the node failed and the topology stale.
    private func send(_ commands: [[[UInt8]]], to node: String) async throws -> [RedisReply] {
        do {
            return try await connection(to: node).pipeline(commands)
        } catch {
            state.withLock { state in
                state.failed = node
                if state.cluster != false { state.stale = true }
            }
            // A connection closed because its node left the topology meanwhile ends its call this way.
            if error is CancellationError, !Task.isCancelled {
                throw RedisError.connection("\(node): left the cluster")
            }
            throw error
        }
    }

    private func connection(to node: String) -> RedisConnection {
        state.withLock { state in
            if let existing = state.nodes[node] { return existing }
            var url = seeds[0]
            if let colon = node.lastIndex(of: ":"), let port = Int(node[node.index(after: colon)...]) {
                url.host = String(node[..<colon])
                url.port = port
            }
            state.made += 1
            let fresh = RedisConnection(url: url, name: "\(name)-\(state.made)", caFile: caFile, socketTimeout: socketTimeout)
            state.nodes[node] = fresh
            return fresh
        }
    }

    private func address(_ url: RedisURL) -> String { "\(url.host):\(url.port)" }

    // MARK: topology

    /// Asks for the topology when it is stale or older than `refreshInterval`: the owner first (it knows
    /// its own slots best), then every other known node and seed, the node that failed last at the end.
    private func refreshTopologyIfDue() async throws {
        let now = ContinuousClock.now
        let candidates: [String] = state.withLock { state in
            guard state.cluster != false || state.stale else { return [] }
            let due = state.stale || state.refreshedAt.map { now - $0 >= Self.refreshInterval } ?? true
            guard due else { return [] }
            var order: [String] = []
            for node in [state.owner].compactMap({ $0 }) + state.known + seeds.map(address) where !order.contains(node) {
                order.append(node)
            }
            if let failed = state.failed, let at = order.firstIndex(of: failed) { order.append(order.remove(at: at)) }
            return order
        }
        guard !candidates.isEmpty else { return }
        var unreachable: [String] = []
        var refusals: [String] = []
        for node in candidates {
            let reply: RedisReply
            do {
                reply = try await connection(to: node).pipeline([[Array("CLUSTER".utf8), Array("SLOTS".utf8)]])[0]
            } catch {
                unreachable.append(node)
                continue
            }
            if case .error(let text) = reply {
                if text.contains("cluster support disabled") {
                    // A plain Redis: one node, no topology to keep.
                    state.withLock { $0.cluster = false; $0.stale = false; $0.owner = nil }
                    return
                }
                refusals.append(text)
                continue
            }
            let host = String(node[..<(node.lastIndex(of: ":") ?? node.endIndex)])
            guard let topology = ClusterTopology(clusterSlots: reply, askedHost: host), !topology.ranges.isEmpty else {
                refusals.append("\(node): no slots in its CLUSTER SLOTS answer")
                continue
            }
            await apply(topology, from: node)
            return
        }
        if unreachable.count == candidates.count {
            throw RedisError.connection("no node of the cluster answers (asked \(candidates.joined(separator: ", ")))")
        }
        // Nodes answer but will not tell the topology (an ACL without CLUSTER, say): follow MOVED only.
        state.withLock { state in
            if state.cluster == nil { state.cluster = false }
            state.stale = false
        }
        logger.warning("Redis Cluster topology not available; following redirections only", metadata: [
            "connection": "\(name)", "reason": "\(refusals.first.map { Printable.clipped($0, to: 200) } ?? "")",
        ])
    }

    /// Takes a topology in: the slot's primary from now on, and connections closed to nodes it no longer names.
    private func apply(_ topology: ClusterTopology, from node: String) async {
        let (change, departed) = state.withLock { state -> ((old: String?, new: String, slot: Int)?, [(String, RedisConnection)]) in
            state.cluster = true
            state.stale = false
            state.failed = nil
            state.refreshedAt = ContinuousClock.now
            state.known = topology.nodes
            var change: (old: String?, new: String, slot: Int)?
            if let slot = state.slot, let primary = topology.primary(of: slot), primary != state.owner {
                change = (state.owner, primary, slot)
                state.owner = primary
            }
            let keep = Set(topology.nodes + [state.owner].compactMap { $0 })
            let departed = state.nodes.filter { !keep.contains($0.key) }
            for (gone, _) in departed { state.nodes[gone] = nil }
            return (change, departed.map { ($0.key, $0.value) })
        }
        if let change, let old = change.old {
            logger.warning("Redis Cluster: the slot's primary changed", metadata: [
                "connection": "\(name)", "slot": "\(change.slot)", "primary": "\(change.new)", "was": "\(old)", "told_by": "\(node)",
            ])
        }
        for (gone, connection) in departed {
            logger.info("Redis Cluster: node left the topology; its connection is closed", metadata: ["connection": "\(name)", "node": "\(gone)"])
            await connection.close()
        }
    }

    // MARK: redirections

    enum Redirection { case moved(String, slot: Int?), ask(String), tryAgain }

    /// `MOVED 3999 127.0.0.1:6381`, `ASK 3999 127.0.0.1:6381`, `TRYAGAIN ...`, `CLUSTERDOWN ...`.
    static func redirection(_ reply: RedisReply) -> Redirection? {
        guard case .error(let text) = reply else { return nil }
        let parts = text.split(separator: " ")
        switch parts.first {
        case "MOVED" where parts.count >= 3: return .moved(String(parts[2]), slot: Int(parts[1]))
        case "ASK" where parts.count >= 3: return .ask(String(parts[2]))
        case "TRYAGAIN", "CLUSTERDOWN": return .tryAgain
        default: return nil
        }
    }
}
