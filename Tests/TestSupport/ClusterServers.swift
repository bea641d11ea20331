import Foundation
import PushCore
import RedisClient

/// A real Redis Cluster on loopback: redis-server nodes in cluster mode, joined with
/// `redis-cli --cluster create`: `primaries` primaries, each with `replicasEach` replicas (which node is
/// which is up to redis-cli: ask `primaryIndex(of:)` and `replicaIndex(of:)`).
public final class RedisClusterServers: @unchecked Sendable {
    public let nodes: [RedisServer]
    private let admin: [RedisConnection]
    /// Each node's cluster id (CLUSTER MYID), by index.
    public private(set) var ids: [String] = []
    /// Nodes stopped with `kill(_:)`: no longer asked anything.
    public private(set) var killed: Set<Int> = []

    /// - Parameter nodeTimeoutMillis: `cluster-node-timeout`: how long a silent primary takes to be
    ///   declared failed (a replica is promoted soon after).
    public init(primaries: Int = 3, replicasEach: Int = 0, nodeTimeoutMillis: Int = 5000) async throws {
        nodes = try (0..<(primaries * (1 + replicasEach))).map { _ in try Self.startNode(timeoutMillis: nodeTimeoutMillis) }
        admin = nodes.map { RedisConnection(url: $0.url, name: "cluster-admin-\($0.port)") }
        guard let cli = which("redis-cli") else { throw TestSetupError("redis-cli is not installed (apt-get install redis-tools)") }
        let created = try runCommand(cli, ["--cluster", "create"] + nodes.map { "127.0.0.1:\($0.port)" }
                                     + ["--cluster-replicas", String(replicasEach), "--cluster-yes"])
        guard created.status == 0 else { throw TestSetupError("redis-cli --cluster create failed: \(created.output)") }
        for connection in admin { ids.append(try await connection.execute(["CLUSTER", "MYID"]).string ?? "") }
        let end = Date().addingTimeInterval(30)
        while Date() < end {
            if try await isSettled(replicas: primaries * replicasEach) { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw TestSetupError("the cluster did not reach cluster_state:ok with every replica in sync")
    }

    /// Every live node says cluster_state:ok, and `replicas` replicas have their link to the primary up.
    private func isSettled(replicas: Int) async throws -> Bool {
        var linked = 0
        for (index, connection) in admin.enumerated() where !killed.contains(index) {
            let info = (try? await connection.execute(["CLUSTER", "INFO"]).string) ?? ""
            if !info.contains("cluster_state:ok") { return false }
            let replication = (try? await connection.execute(["INFO", "replication"]).string) ?? ""
            if replication.contains("master_link_status:up") { linked += 1 }
        }
        return linked >= replicas
    }

    /// Stops node `index` with SIGKILL, as a crash would.
    public func kill(_ index: Int) {
        killed.insert(index)
        nodes[index].kill()
    }

    /// A live node's view of the cluster (CLUSTER NODES), as lines of fields.
    private func clusterNodes() async throws -> [[Substring]] {
        for (index, connection) in admin.enumerated() where !killed.contains(index) {
            if let table = try? await connection.execute(["CLUSTER", "NODES"]).string {
                return table.split(separator: "\n").map { $0.split(separator: " ") }
            }
        }
        throw TestSetupError("no cluster node answers")
    }

    /// The index of a replica of primary `index` (the first one listed).
    public func replicaIndex(of primary: Int) async throws -> Int {
        for fields in try await clusterNodes() where fields.count >= 4 && fields[3] == ids[primary] {
            if let index = ids.firstIndex(of: String(fields[0])) { return index }
        }
        throw TestSetupError("node \(primary) has no replica")
    }

    /// True when node `index` says it is a primary and every live node says cluster_state:ok.
    public func isPromoted(_ index: Int) async -> Bool {
        let role = (try? await admin[index].execute(["ROLE"]).array?.first?.string) ?? ""
        guard role == "master" else { return false }
        for (other, connection) in admin.enumerated() where !killed.contains(other) {
            let info = (try? await connection.execute(["CLUSTER", "INFO"]).string) ?? ""
            if !info.contains("cluster_state:ok") { return false }
        }
        return true
    }

    /// A node on a random port pair (port, port + 10000 for the cluster bus); another pair if that one was
    /// taken meanwhile.
    private static func startNode(timeoutMillis: Int) throws -> RedisServer {
        var lastError: Error?
        for _ in 0..<3 {
            do {
                return try RedisServer(arguments: ["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                                                   "--cluster-node-timeout", String(timeoutMillis), "--appendonly", "yes"], port: freeClusterPort())
            } catch {
                lastError = error
            }
        }
        throw lastError ?? TestSetupError("no cluster node started")
    }

    /// The URL of the first node: clients start there and follow redirections.
    public var seedURL: String { nodes[0].urlString }

    public func slot(of key: String) async throws -> Int {
        let live = admin.indices.first { !killed.contains($0) } ?? 0
        return Int(try await admin[live].execute(["CLUSTER", "KEYSLOT", key]).integer ?? -1)
    }

    /// Index of the node that owns `slot`, and every node's id.
    public func owner(of slot: Int) async throws -> (index: Int, ids: [String]) {
        for fields in try await clusterNodes() {
            guard fields.count >= 9, let index = ids.firstIndex(of: String(fields[0])) else { continue }
            for range in fields[8...] {
                let bounds = range.split(separator: "-").compactMap { Int($0) }
                if bounds.count == 2, (bounds[0]...bounds[1]).contains(slot) { return (index, ids) }
                if bounds.count == 1, bounds[0] == slot { return (index, ids) }
            }
        }
        throw TestSetupError("no node owns slot \(slot)")
    }

    /// Moves `slot` to another node the way `redis-cli --cluster reshard` does (IMPORTING/MIGRATING, MIGRATE
    /// of each key, SETSLOT NODE), one key at a time with `pause` between keys, so clients meet the slot
    /// while its keys are split between two nodes. Returns the new owner's index.
    @discardableResult
    public func migrate(slot: Int, pause: Duration) async throws -> Int {
        let move = try await beginMigration(slot: slot)
        while try await migrateOneKey(move) {
            try await Task.sleep(for: pause)
        }
        try await finishMigration(move)
        return move.target
    }

    /// A slot half-way between two nodes: its source answers ASK for keys it no longer holds.
    public struct SlotMove: Sendable {
        public var slot: Int
        public var source: Int
        public var target: Int
        public var ids: [String]
    }

    /// Marks `slot` as migrating from its owner to the next node (nothing moved yet).
    public func beginMigration(slot: Int) async throws -> SlotMove {
        let (source, ids) = try await owner(of: slot)
        let target = (source + 1) % nodes.count
        try await admin[target].execute(["CLUSTER", "SETSLOT", String(slot), "IMPORTING", ids[source]])
        try await admin[source].execute(["CLUSTER", "SETSLOT", String(slot), "MIGRATING", ids[target]])
        return SlotMove(slot: slot, source: source, target: target, ids: ids)
    }

    /// Moves one key of the slot (the named one, or any left); false when none was left to move.
    @discardableResult
    public func migrateOneKey(_ move: SlotMove, key named: String? = nil) async throws -> Bool {
        let key: String
        if let named {
            key = named
        } else {
            let keys = (try await admin[move.source].execute(["CLUSTER", "GETKEYSINSLOT", String(move.slot), "1"]).array ?? []).compactMap(\.string)
            guard let first = keys.first else { return false }
            key = first
        }
        let reply = try await admin[move.source].execute(["MIGRATE", "127.0.0.1", String(nodes[move.target].port), "", "0", "5000", "KEYS", key])
        if case .error(let text) = reply { throw TestSetupError("MIGRATE \(key): \(text)") }
        return true
    }

    /// Assigns the slot to its target on every node (the end of a move).
    public func finishMigration(_ move: SlotMove) async throws {
        for connection in admin {
            try await connection.execute(["CLUSTER", "SETSLOT", String(move.slot), "NODE", move.ids[move.target]])
        }
    }

    /// How many slots the node at `index` owns, and its id (from CLUSTER NODES).
    public func slotsOwned(by index: Int) async throws -> (count: Int, id: String) {
        let id = try await admin[index].execute(["CLUSTER", "MYID"]).string ?? ""
        let table = try await admin[0].execute(["CLUSTER", "NODES"]).string ?? ""
        var count = 0
        for line in table.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count >= 8, String(fields[0]) == id else { continue }
            for range in fields.dropFirst(8) where !range.hasPrefix("[") {
                let bounds = range.split(separator: "-").compactMap { Int($0) }
                count += bounds.count == 2 ? bounds[1] - bounds[0] + 1 : bounds.count
            }
        }
        return (count, id)
    }

    /// Runs a command on one node as it is, without following redirections (errors come back as replies).
    public func onNode(_ index: Int, _ command: [String]) async throws -> RedisReply {
        try await admin[index].pipeline([command.map { Array($0.utf8) }])[0]
    }

    public func stop() async {
        for connection in admin { await connection.close() }
        killed = Set(nodes.indices)
        nodes.forEach { $0.kill() }
    }
}
