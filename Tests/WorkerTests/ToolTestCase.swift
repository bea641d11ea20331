import APNsProvider
import Foundation
import PushCore
import QueueProtocol
import RedisClient
import TestSupport
import XCTest

/// What the operator-tool tests share: a fresh redis-server, a client, and the `worker` binary run as a tool.
class ToolTestCase: RedisTestCase {
    var directory: String!
    /// The tests' own Redis client (the tools make theirs).
    var client: RedisConnection { connection }

    /// What the tools write is read back here as the worker reads it: the default provider's rules are its
    /// module's, registered as the worker registers it.
    override class func setUp() {
        super.setUp()
        _ = APNsModule.provider
    }

    override func setUp() async throws {
        try await super.setUp()
        directory = makeTemporaryDirectory("tools")
    }

    /// More environment for the tools (e.g. `REDIS_SHARDS`).
    var toolEnvironment: [String: String] = [:]

    /// Starts `worker ARGUMENTS` against this test's Redis.
    func start(_ arguments: [String]) throws -> WorkerProcess {
        try WorkerProcess(environment: ["REDIS_URL": redis.urlString].merging(toolEnvironment) { $1 }, arguments: arguments,
                          logFile: "\(directory!)/tool-\(UUID().uuidString.prefix(6)).log")
    }

    /// Runs `worker ARGUMENTS` to its end: exit status and output.
    func tool(_ arguments: [String]) async throws -> (status: Int32?, output: String) {
        let process = try start(arguments)
        let status = await process.waitForExit(timeout: 60)
        return (status, process.log)
    }
}
