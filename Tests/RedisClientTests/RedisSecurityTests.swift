import APNsProvider
import Foundation
import PushCore
import QueueProtocol
import RedisClient
import TestSupport
import XCTest

/// `rediss://` against a real redis-server serving TLS only, ACL users and passwords, and what errors show.
final class RedisSecurityTests: XCTestCase {
    /// The `apns` block below is read as the worker reads it: with its module registered (unregistered, its keys
    /// were not read at all, and a password they held could not show).
    override class func setUp() {
        super.setUp()
        _ = APNsModule.provider
    }

    func testTLSWithTheServersCA() async throws {
        let server = try RedisServer(tls: true)
        // Killed after the connection is closed (teardown blocks run last first): closing sends TLS close_notify.
        addTeardownBlock { server.kill() }
        let connection = RedisConnection(url: try RedisURL(parsing: server.urlString), name: "tls", caFile: server.caFile)
        addTeardownBlock { await connection.close() }
        try await connection.execute(["SET", "k", "over tls"])
        let value = try await connection.execute(["GET", "k"]).string
        XCTAssertEqual(value, "over tls")
        let replies = try await connection.pipeline((0..<500).map { _ in [Array("INCR".utf8), Array("n".utf8)] })
        XCTAssertEqual(replies.last?.integer, 500, "a pipeline of many replies is read across TLS records")
        let big = [UInt8](repeating: 120, count: 300_000)
        try await connection.execute(bytes: [Array("SET".utf8), Array("big".utf8), big])
        let back = try await connection.execute(["GET", "big"]).bytes
        XCTAssertEqual(back, big)
    }

    /// A host name (not an IP) is verified against the certificate and sent as SNI; AddressSanitizer
    /// checks that the name OpenSSL reads is still alive when it reads it.
    func testTLSToAHostNameVerifiesTheNameAndSendsIt() async throws {
        let server = try RedisServer(tls: true)
        addTeardownBlock { server.kill() }
        let connection = RedisConnection(url: try RedisURL(parsing: "rediss://localhost:\(server.port)/0"), name: "tls-name",
                                         caFile: server.caFile)
        addTeardownBlock { await connection.close() }
        try await connection.execute(["SET", "k", "by name"])
        try await assertEqual(try await connection.execute(["GET", "k"]).string, "by name")
    }

    func testTLSRefusesAServerItCannotVerify() async throws {
        let server = try RedisServer(tls: true)
        addTeardownBlock { server.kill() }
        // The system's CAs do not know the test CA.
        let connection = RedisConnection(url: try RedisURL(parsing: server.urlString), name: "tls-untrusted")
        addTeardownBlock { await connection.close() }
        do {
            try await connection.execute(["PING"])
            XCTFail("an unverified server must be refused")
        } catch {
            XCTAssertTrue("\(error)".contains("certificate not trusted"), "\(error)")
        }
        // Plain TCP to a TLS port fails too, rather than hanging.
        let plain = RedisConnection(url: RedisURL(host: "127.0.0.1", port: server.port), name: "plain", socketTimeout: .seconds(2))
        addTeardownBlock { await plain.close() }
        do {
            try await plain.execute(["PING"])
            XCTFail("plain text to a TLS port cannot work")
        } catch {}
    }

    func testACLUserAndPasswordAndErrorsThatNeverShowThePassword() async throws {
        let server = try RedisServer(arguments: ["--requirepass", "default-Secret-1", "--user", "pusher", "on",
                                                 ">pusher-Secret-2", "~push:*", "+@all"])
        defer { server.kill() }
        let acl = RedisConnection(url: try RedisURL(parsing: "redis://pusher:pusher-Secret-2@127.0.0.1:\(server.port)/0"), name: "acl")
        addTeardownBlock { await acl.close() }
        try await acl.execute(["SET", "push:x", "1"])
        do {
            try await acl.execute(["SET", "other", "1"])
            XCTFail("the ACL limits this user to push:* keys")
        } catch {
            XCTAssertTrue("\(error)".contains("NOPERM"), "\(error)")
        }
        let legacy = RedisConnection(url: try RedisURL(parsing: "redis://:default-Secret-1@127.0.0.1:\(server.port)"), name: "pass")
        addTeardownBlock { await legacy.close() }
        let pong = try await legacy.execute(["PING"]).string
        XCTAssertEqual(pong, "PONG")

        let wrongText = "redis://pusher:wrong-Secret-3@127.0.0.1:\(server.port)/0"
        let wrong = RedisConnection(url: try RedisURL(parsing: wrongText), name: "wrong")
        addTeardownBlock { await wrong.close() }
        do {
            try await wrong.execute(["PING"])
            XCTFail("a wrong password must fail")
        } catch {
            XCTAssertTrue("\(error)".contains("WRONGPASS"), "\(error)")
            XCTAssertFalse("\(error)".contains("wrong-Secret-3"))
        }
    }

    func testURLsAndConfigurationNeverPrintThePassword() throws {
        let url = try RedisURL(parsing: "rediss://pusher:p%40ss-Secret@redis.example:6380/2")
        XCTAssertEqual(url.password?.value, "p@ss-Secret")
        XCTAssertEqual(url.username, "pusher")
        XCTAssertTrue(url.tls)
        XCTAssertEqual("\(url)", "rediss://pusher:***@redis.example:6380/2")
        for text in [String(describing: url), String(reflecting: url), "\(url.password!)", dumped(url)] {
            XCTAssertFalse(text.contains("Secret"), text)
        }
        let loader = ConfigurationLoader(environment: [
            "REDIS_URL": "redis://:hunter2-Secret@10.1.2.3:6379/0",
            "APNS_APPS_0_TOPIC": "com.example.legacy", "APNS_APPS_0_CERT_FILE": "/x.p12",
            "APNS_APPS_0_CERT_PASSWORD": "cert-Secret",
        ])
        let configuration = try loader.load(yaml: "")
        XCTAssertEqual(configuration.providerBlocks["apns"]?.values["apps.0.cert_password"], "cert-Secret", "the block holds it")
        for text in [String(describing: configuration), String(reflecting: configuration), dumped(configuration),
                     String(reflecting: configuration.providerBlocks["apns"]!)] {
            XCTAssertFalse(text.contains("Secret"), text)
        }
        XCTAssertTrue(configuration.summaryLines.contains("redis.url: redis://:***@10.1.2.3:6379/0"))
        // A URL that does not even parse is shown without its password too.
        XCTAssertThrowsError(try RedisURL(parsing: "http://user:bad-Secret@host")) { error in
            XCTAssertEqual("\(error)", "configuration redis.url: 'http://user:***@host' is not redis[s]://[user:password@]host:port/db")
        }
    }

    private func dumped<T>(_ value: T) -> String {
        var text = ""
        dump(value, to: &text)
        return text
    }
}
