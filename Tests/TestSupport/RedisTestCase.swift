import QueueProtocol
import RedisClient
import XCTest

/// A test case with a fresh redis-server on a loopback port and a connection to it, per test.
open class RedisTestCase: XCTestCase {
    public var redis: RedisServer!
    public var connection: RedisConnection!
    public let keys = RedisKeys()

    open override func setUp() async throws {
        redis = try RedisServer()
        connection = RedisConnection(url: redis.url, name: "test")
    }

    open override func tearDown() async throws {
        await connection.close()
        redis.kill()
    }
}
