import Foundation
import PushCore
import QueueProtocol
import RedisClient
import TestSupport
import XCTest

/// What the operator-tool tests share: a fresh redis-server, a client, and the `worker` binary run as a tool.
class ToolTestCase: XCTestCase {
    var redis: RedisServer!
    var client: RedisConnection!
    var directory: String!
    let keys = RedisKeys()

    override func setUp() async throws {
        redis = try RedisServer()
        client = RedisConnection(url: redis.url, name: "tools-client")
        directory = makeTemporaryDirectory("tools")
    }

    override func tearDown() async throws {
        await client.close()
        redis.kill()
    }

    /// Starts `worker ARGUMENTS` against this test's Redis.
    func start(_ arguments: [String]) throws -> WorkerProcess {
        try WorkerProcess(environment: ["REDIS_URL": redis.urlString], arguments: arguments,
                          logFile: "\(directory!)/tool-\(UUID().uuidString.prefix(6)).log")
    }

    /// Runs `worker ARGUMENTS` to its end: exit status and output.
    func tool(_ arguments: [String]) async throws -> (status: Int32?, output: String) {
        let process = try start(arguments)
        let status = await process.waitForExit(timeout: 60)
        return (status, process.log)
    }
}
