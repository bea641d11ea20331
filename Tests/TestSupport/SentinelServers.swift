import Foundation
import PushCore
import RedisClient

/// A real Redis Sentinel setup on loopback: a primary, a replica of it, and three `redis-server --sentinel`
/// processes (quorum 2) that monitor the primary as `master`, with short timeouts so a failover takes a
/// few seconds: down after 1 s of silence (`downAfterMillis`), failover-timeout 3 s.
public final class RedisSentinelServers: @unchecked Sendable {
    public let master = "pushmaster"
    public let primary: RedisServer
    public let replica: RedisServer
    public private(set) var sentinelPorts: [Int] = []
    private var sentinels: [Process] = []
    private var admin: [RedisConnection] = []

    /// The sentinels' own password (`requirepass`) and ACL user, when made with them.
    public let password: String?
    public let user: (name: String, password: String)?

    /// `downAfterMillis`: how long the sentinels wait before they find the primary down (a test that needs
    /// them to keep naming a node while it changes can make that longer than itself). `password`: the
    /// sentinels' `requirepass` (they give it to one another with `sentinel sentinel-pass`); `user`: an ACL user
    /// of theirs besides. The primary and the replica have no password either way.
    public init(downAfterMillis: Int = 1000, password: String? = nil, user: (name: String, password: String)? = nil) async throws {
        self.password = password
        self.user = user
        primary = try RedisServer()
        replica = try RedisServer(arguments: ["--replicaof", "127.0.0.1", String(primary.port)])
        guard let binary = which("redis-server") else { throw TestSetupError("redis-server is not installed") }
        for _ in 0..<3 {
            let port = freePort()
            let directory = makeTemporaryDirectory("sentinel")
            // Sentinel rewrites its configuration file as it learns: it must be a file of its own, writable.
            let config = """
                port \(port)
                bind 127.0.0.1
                dir \(directory)
                sentinel monitor \(master) 127.0.0.1 \(primary.port) 2
                sentinel down-after-milliseconds \(master) \(downAfterMillis)
                sentinel failover-timeout \(master) 3000
                sentinel parallel-syncs \(master) 1
                \(password.map { "requirepass \($0)\nsentinel sentinel-pass \($0)" } ?? "")
                \(user.map { "user \($0.name) on >\($0.password) +@all" } ?? "")

                """
            try config.write(toFile: "\(directory)/sentinel.conf", atomically: true, encoding: .utf8)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: binary)
            process.arguments = ["\(directory)/sentinel.conf", "--sentinel"]
            process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
            process.standardError = FileHandle(forWritingAtPath: "/dev/null")
            try process.run()
            sentinels.append(process)
            sentinelPorts.append(port)
            guard waitForPort(port) else { throw TestSetupError("redis-server --sentinel did not start on port \(port)") }
            var adminURL = RedisURL(host: "127.0.0.1", port: port)
            adminURL.password = password.map { Secret($0) }
            admin.append(RedisConnection(url: adminURL, name: "sentinel-admin-\(port)"))
        }
        // A failover needs the sentinels to know one another (hello messages, every 2 s) and the replica.
        let end = Date().addingTimeInterval(30)
        while Date() < end {
            if await isSettled() { return }
            try await Task.sleep(for: .milliseconds(200))
        }
        throw TestSetupError("the sentinels did not find each other and the replica")
    }

    private func isSettled() async -> Bool {
        for connection in admin {
            let peers = (try? await connection.execute(["SENTINEL", "sentinels", master]).array) ?? []
            let replicas = (try? await connection.execute(["SENTINEL", "replicas", master]).array) ?? []
            guard peers.count == 2, replicas.count == 1 else { return false }
        }
        let replicaAdmin = RedisConnection(url: replica.url, name: "replica-admin")
        let link = (try? await replicaAdmin.execute(["INFO", "replication"]).string) ?? ""
        await replicaAdmin.close()
        return link.contains("master_link_status:up")
    }

    /// `redis.sentinel` for these sentinels.
    public var settings: SentinelSettings {
        var settings = SentinelSettings()
        settings.master = master
        settings.nodes = sentinelPorts.map { "127.0.0.1:\($0)" }
        return settings
    }

    /// The primary's address as the first sentinel that answers names it.
    public func namedPrimary() async -> String? {
        for connection in admin {
            if let fields = try? await connection.execute(["SENTINEL", "get-master-addr-by-name", master]).array,
               fields.count == 2, let host = fields[0].string, let port = fields[1].string {
                return "\(host):\(port)"
            }
        }
        return nil
    }

    public func stop() async {
        for connection in admin { await connection.close() }
        for process in sentinels where process.isRunning {
            Foundation.kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        primary.kill()
        replica.kill()
    }

    deinit {
        for process in sentinels where process.isRunning { Foundation.kill(process.processIdentifier, SIGKILL) }
    }
}
