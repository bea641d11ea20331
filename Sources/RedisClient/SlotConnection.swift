import Logging
import PushCore

/// A connection for the keys of one Redis Cluster hash slot (one shard of the queue: every key of a shard
/// carries the same hash tag). It sends each command to the slot's primary as the worker's `ClusterMap` knows
/// it (shared by every connection of the worker, so that what one learns serves all), and keeps that map
/// current: asked again after a MOVED, after a connection error (the other nodes first, so a replica promoted
/// after its primary died is found without the address first given) and every 10 s while in use. It follows
/// the cluster's redirections each command on its own: MOVED (the slot lives elsewhere now: go there from now
/// on), ASK (the slot is being migrated and this key is already on the target: send ASKING and the command
/// there, once), TRYAGAIN (a multi-key command while the slot's keys are split between two nodes: wait and
/// retry) and CLUSTERDOWN. Against a Redis that is not a cluster, it is a plain connection to the first
/// seed. Each node gets a connection (and thread) of its own, closed when the node leaves the topology.
public final class SlotConnection: RedisCommands {
    private let map: ClusterMap
    private let name: String
    private let caFile: String
    private let socketTimeout: Duration
    private let logger = Logger(label: "push.redis.cluster")

    private struct State {
        /// The slot of the connection's keys: from its key, or from the first MOVED when no key was given.
        var slot: Int?
        /// The node this connection last sent the slot's commands to: a change is logged once per connection.
        var lastOwner: String?
        var nodes: [String: RedisConnection] = [:]
        /// The map's generation whose departed nodes were last closed here.
        var generation = 0
        var made = 0
    }
    private let state: Locked<State>

    /// How often one command follows a redirection or waits out TRYAGAIN before the error is returned.
    static let maxRedirections = 24
    /// A move of a slot's keys takes a while: TRYAGAIN waits 20 ms, doubling to 320 ms (about 5 s in all).
    static let tryAgainWait = Backoff(baseMillis: 20, maxMillis: 320, lowestPercent: 100)

    /// - Parameters:
    ///   - map: the topology shared with the process's other connections to the same cluster.
    ///   - key: a key of the slot (a shard's hash-tagged prefix, `push:{0}`); nil: learned from the first MOVED.
    public init(map: ClusterMap, key: String?, name: String, caFile: String = "", socketTimeout: Duration = .seconds(5)) {
        self.map = map
        map.attach()
        self.name = name
        self.caFile = caFile
        self.socketTimeout = socketTimeout
        var initial = State()
        initial.slot = key.map(ClusterSlot.of(key:))
        state = Locked(initial)
    }

    /// A connection with a topology of its own (tests, one-off connections).
    /// - Parameters:
    ///   - seeds: nodes of one cluster (or one plain Redis); the first one's credentials apply to all.
    ///   - key: a key of the slot (a shard's hash-tagged prefix, `push:{0}`); nil: learned from the first MOVED.
    public convenience init(seeds: [RedisURL], key: String?, name: String, caFile: String = "", socketTimeout: Duration = .seconds(5)) {
        precondition(!seeds.isEmpty, "a SlotConnection needs at least one address")
        self.init(map: ClusterMap(seeds: seeds, name: name, caFile: caFile, socketTimeout: socketTimeout), key: key, name: name,
                  caFile: caFile, socketTimeout: socketTimeout)
    }

    /// One seed, slot learned from the first MOVED (the form used before topologies were known).
    public convenience init(url: RedisURL, name: String, caFile: String = "", socketTimeout: Duration = .seconds(5)) {
        self.init(seeds: [url], key: nil, name: name, caFile: caFile, socketTimeout: socketTimeout)
    }

    /// The node the slot's commands go to now (`host:port`), for tests and logs.
    public var currentNode: String { map.owner(of: state.withLock { $0.slot }) }

    /// Sends the commands and returns their replies in order. Each command answered with a redirection is
    /// sent again on its own, where its own answer points (MOVED: the slot's owner from now on; ASK: the
    /// importing node, once, after ASKING; TRYAGAIN/CLUSTERDOWN: the same place, after a pause). A command
    /// that ran (any other reply) is never sent again, so a pipeline that meets a slot half-way between two
    /// nodes runs every write exactly once and creates no key on the node that does not own it. A
    /// connection error is thrown (the command may or may not have run: the caller decides what to redo),
    /// and the topology is asked again before the next command.
    public func pipeline(_ commands: [[[UInt8]]]) async throws -> [RedisReply] {
        try await map.refreshIfDue()
        await followTopology()
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
                        let known = state.withLock { state -> Int? in
                            if state.slot == nil { state.slot = slot }
                            return state.slot
                        }
                        // The cluster changed: every connection goes there, and learns the rest before its next command.
                        if let known { map.moved(slot: known, to: owner) }
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
                try await Task.sleep(for: .milliseconds(Self.tryAgainWait.delayMillis(attempt: waits + 1)))
                waits += 1
            }
        }
        throw RedisError.server("TRYAGAIN: slot still moving after \(Self.maxRedirections) tries")
    }

    /// The slot owner's `RedisConnection.waitForListElement` (BLMOVE with its reply skipped, then LLEN), so
    /// the element waited on never enters this process on a cluster either. A MOVED (LLEN's: the BLMOVE's own
    /// answer was skipped, and both name the same key) is followed like any command's. An ASK, TRYAGAIN or
    /// CLUSTERDOWN answers "look": the slot is moving, and the claim that follows a wake-up follows those
    /// redirections itself; at worst it finds nothing and the worker waits again.
    public func waitForListElement(_ key: String, timeoutSeconds: Double) async throws -> Bool {
        try await map.refreshIfDue()
        await followTopology()
        for _ in 0..<Self.maxRedirections {
            let node = currentNode
            let reply: RedisReply
            do {
                reply = try await connection(to: node).lengthAfterWaiting(key, timeoutSeconds: timeoutSeconds)
            } catch {
                map.failed(node)
                if error is CancellationError, !Task.isCancelled { throw RedisError.connection("\(node): left the cluster") }
                throw error
            }
            switch Self.redirection(reply) {
            case nil:
                if case .error(let text) = reply { throw RedisError.server(text) }
                return (reply.integer ?? 0) > 0
            case .moved(let owner, let slot):
                let known = state.withLock { state -> Int? in
                    if state.slot == nil { state.slot = slot }
                    return state.slot
                }
                if let known { map.moved(slot: known, to: owner) }
            case .ask, .tryAgain:
                return true
            }
        }
        throw RedisError.server("MOVED: slot still moving after \(Self.maxRedirections) tries")
    }

    public func interrupt() {
        state.withLock { state in state.nodes.values.forEach { $0.interrupt() } }
        map.interrupt()
    }

    public func close() async {
        let connections = state.withLock { state -> [RedisConnection] in
            let all = Array(state.nodes.values)
            state.nodes = [:]
            return all
        }
        for connection in connections { await connection.close() }
        await map.detach()
    }

    // MARK: nodes

    /// Runs commands on one node. A connection error marks the node failed and the topology stale.
    private func send(_ commands: [[[UInt8]]], to node: String) async throws -> [RedisReply] {
        do {
            return try await connection(to: node).pipeline(commands)
        } catch {
            map.failed(node)
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
            state.made += 1
            let fresh = RedisConnection(url: map.url(of: node), name: "\(name)-\(state.made)", caFile: caFile,
                                        socketTimeout: socketTimeout)
            state.nodes[node] = fresh
            return fresh
        }
    }

    // MARK: topology

    /// After the map took a topology in: logs a change of the slot's primary (once per connection) and closes
    /// this connection's sockets to nodes the topology no longer names.
    private func followTopology() async {
        let (generation, known) = map.nodes
        let owner = currentNode
        let (change, departed) = state.withLock { state -> ((old: String, slot: Int)?, [(String, RedisConnection)]) in
            var change: (old: String, slot: Int)?
            if let slot = state.slot, let old = state.lastOwner, old != owner { change = (old, slot) }
            state.lastOwner = owner
            guard generation != state.generation, !known.isEmpty else { return (change, []) }
            state.generation = generation
            let keep = Set(known + [owner])
            let departed = state.nodes.filter { !keep.contains($0.key) }
            for (gone, _) in departed { state.nodes[gone] = nil }
            return (change, departed.map { ($0.key, $0.value) })
        }
        if let change {
            logger.warning("Redis Cluster: the slot's primary changed", metadata: [
                "connection": "\(name)", "slot": "\(change.slot)", "primary": "\(owner)", "was": "\(change.old)",
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
