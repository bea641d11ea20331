import Logging
import PushCore

/// What one process knows of its Redis Cluster: which node is each slot's primary. Shared by every
/// `SlotConnection` of a worker (claims, acknowledgements, processing-hash reads, heartbeats, recovery of every
/// shard) or of a tool, so that what any one of them learns serves all: a MOVED, a connection error or the
/// periodic refresh of one connection updates the map, and a connection used for the first time after the
/// address first given died still finds the promoted replica (it asks the nodes the map knows, not its seed).
///
/// The topology is `CLUSTER SLOTS`, asked of the nodes the map knows and the seeds, the node that failed last
/// at the end. It is asked again when stale (a MOVED, a connection error, never asked) and every
/// `refreshInterval` while connections use it, one refresh at a time. The map asks on connections of its own.
public final class ClusterMap: Sendable {
    /// The nodes first given; the first one's password, database and TLS are used for every node.
    let seeds: [RedisURL]
    private let name: String
    private let caFile: String
    private let socketTimeout: Duration
    private let logger = Logger(label: "push.redis.cluster")

    private struct State {
        /// nil until a node answered CLUSTER SLOTS; false: not a cluster, or topology not available to us.
        var cluster: Bool?
        var topology = ClusterTopology(ranges: [])
        /// Slots a MOVED sent elsewhere since the last topology: the owner it named wins until the next one.
        var moved: [Int: String] = [:]
        /// Every node of the last topology: asked (with the seeds) for the next one.
        var known: [String] = []
        /// The topology must be asked before the next command.
        var stale = true
        var refreshedAt: ContinuousClock.Instant?
        /// A refresh is under way: others use what is known meanwhile instead of asking too.
        var refreshing = false
        /// The node whose connection failed last: asked for the topology after all others.
        var failed: String?
        /// Counts topologies taken in, so connections see when theirs is out of date.
        var generation = 0
        var connections: [String: RedisConnection] = [:]
        var made = 0
        /// Connections using the map: the last one to close closes the map's own connections.
        var users = 0
    }
    private let state: Locked<State>

    /// How often the topology is asked while connections use it: one cheap round trip, so a change that
    /// caused no redirection yet (a replica added, a node removed) is seen.
    static let refreshInterval = Duration.seconds(10)

    /// - Parameters:
    ///   - seeds: nodes of one cluster (or one plain Redis); the first one's credentials apply to all.
    ///   - name: names its own connections' threads (`<name>-topology-N`).
    public init(seeds: [RedisURL], name: String, caFile: String = "", socketTimeout: Duration = .seconds(5)) {
        precondition(!seeds.isEmpty, "a ClusterMap needs at least one address")
        self.seeds = seeds
        self.name = name
        self.caFile = caFile
        self.socketTimeout = socketTimeout
        state = Locked(State())
    }

    /// The node that serves `slot` now (`host:port`): what a MOVED said since the last topology, else the
    /// topology's primary; the first seed while nothing is known (and always, against a plain Redis).
    func owner(of slot: Int?) -> String {
        state.withLock { state in
            guard let slot else { return nil }
            return state.moved[slot] ?? state.topology.primary(of: slot)
        } ?? Self.address(seeds[0])
    }

    /// Every node the last topology named (empty before one was learned or against a plain Redis).
    var nodes: (generation: Int, nodes: [String]) { state.withLock { ($0.generation, $0.known) } }

    /// Whether a node answered that it is not a cluster (or would not tell the topology).
    var isPlain: Bool { state.withLock { $0.cluster == false } }

    /// A MOVED: the slot lives at `owner` from now on; the rest of the cluster is learned before the next command.
    func moved(slot: Int, to owner: String) {
        state.withLock { state in
            state.moved[slot] = owner
            if state.cluster == true { state.stale = true }
        }
    }

    /// A connection to `node` failed: the topology is asked again before the next command, `node` last.
    func failed(_ node: String) {
        state.withLock { state in
            state.failed = node
            if state.cluster != false { state.stale = true }
        }
    }

    /// Asks for the topology when it is stale or older than `refreshInterval`, unless another connection is
    /// asking right now. Throws when no node answers at all.
    func refreshIfDue() async throws {
        let now = ContinuousClock.now
        let candidates: [String] = state.withLock { state in
            guard !state.refreshing, state.cluster != false || state.stale else { return [] }
            let due = state.stale || state.refreshedAt.map { now - $0 >= Self.refreshInterval } ?? true
            guard due else { return [] }
            var order: [String] = []
            for node in state.topology.ranges.map(\.primary) + state.known + seeds.map(Self.address) where !order.contains(node) {
                order.append(node)
            }
            if let failed = state.failed, let at = order.firstIndex(of: failed) { order.append(order.remove(at: at)) }
            state.refreshing = true
            return order
        }
        guard !candidates.isEmpty else { return }
        defer { state.withLock { $0.refreshing = false } }
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
                    state.withLock { $0.cluster = false; $0.stale = false }
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
            await apply(topology)
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

    /// Ends a topology question blocked on a silent node (shutdown); later ones connect again.
    func interrupt() {
        state.withLock { state in state.connections.values.forEach { $0.interrupt() } }
    }

    /// A connection starts using the map.
    func attach() { state.withLock { $0.users += 1 } }

    /// A connection using the map closed; the last one closes the map's own connections (made again if the
    /// map is used after all).
    func detach() async {
        let last = state.withLock { state -> Bool in
            state.users -= 1
            return state.users <= 0
        }
        if last { await close() }
    }

    /// Closes the map's own connections and their threads.
    public func close() async {
        let connections = state.withLock { state -> [RedisConnection] in
            let all = Array(state.connections.values)
            state.connections = [:]
            return all
        }
        for connection in connections { await connection.close() }
    }

    /// Takes a topology in; connections to nodes it no longer names are closed.
    private func apply(_ topology: ClusterTopology) async {
        let departed = state.withLock { state -> [RedisConnection] in
            state.cluster = true
            state.stale = false
            state.failed = nil
            state.refreshedAt = ContinuousClock.now
            state.topology = topology
            state.moved = [:]
            state.known = topology.nodes
            state.generation += 1
            let keep = Set(topology.nodes)
            let departed = state.connections.filter { !keep.contains($0.key) }
            for (gone, _) in departed { state.connections[gone] = nil }
            return Array(departed.values)
        }
        for connection in departed { await connection.close() }
    }

    private func connection(to node: String) -> RedisConnection {
        state.withLock { state in
            if let existing = state.connections[node] { return existing }
            state.made += 1
            let fresh = RedisConnection(url: url(of: node), name: "\(name)-topology-\(state.made)", caFile: caFile,
                                        socketTimeout: socketTimeout)
            state.connections[node] = fresh
            return fresh
        }
    }

    /// The URL of a node: the first seed's credentials, database and TLS at the node's address.
    func url(of node: String) -> RedisURL {
        var url = seeds[0]
        if let colon = node.lastIndex(of: ":"), let port = Int(node[node.index(after: colon)...]) {
            url.host = String(node[..<colon])
            url.port = port
        }
        return url
    }

    static func address(_ url: RedisURL) -> String { "\(url.host):\(url.port)" }
}
