import Foundation
import PushCore
import QueueProtocol
import RedisClient
import TestSupport
import XCTest

/// The worker binary with secrets in play: Redis over TLS with an ACL user, a .p8 key and a
/// password-protected client certificate, at trace level. None of the secrets may reach its output.
final class SecurityTests: XCTestCase {
    let keys = RedisKeys()
    let aclPassword = "pusher-Secret-7f3a"
    let certPassword = "cert-Secret-19bd"

    func testNoSecretReachesTheLogsAtTraceLevelOverTLSWithAnACLUser() async throws {
        let redis = try RedisServer(tls: true, arguments: ["--user", "pusher", "on", ">\(aclPassword)", "~push:*", "+@all",
                                                           "--user", "default", "off"])
        // Killed after the client is closed (teardown blocks run last first): closing sends TLS close_notify.
        addTeardownBlock { redis.kill() }
        let apns = try await EmulatorStandIn()
        let directory = makeTemporaryDirectory("secrets")
        let certificates = try generateClientCertificate(in: directory, password: certPassword)
        var url = try RedisURL(parsing: "rediss://pusher:\(aclPassword)@127.0.0.1:\(redis.port)/0")
        url.tls = true
        let client = RedisConnection(url: url, name: "secrets-client", caFile: redis.caFile)
        addTeardownBlock { await client.close() }
        try await client.lpush(keys.queue, (0..<30).map { messageJSON(id: "s\($0)", tokens: [token("a1", $0)]) })

        let worker = try WorkerProcess(environment: [
            "LOG_LEVEL": "trace",
            "REDIS_URL": "rediss://pusher:\(aclPassword)@127.0.0.1:\(redis.port)/0", "REDIS_CA_FILE": redis.caFile,
            "APNS_ENDPOINT": apns.endpoint, "APNS_CA_FILE": apns.caFile,
            "APNS_APPS_0_TOPIC": "com.example.chat", "APNS_APPS_0_TEAM_ID": EmulatorStandIn.teamID,
            "APNS_APPS_0_KEY_ID": EmulatorStandIn.keyID, "APNS_APPS_0_KEY_FILE": apns.keyFile,
            "APNS_APPS_1_TOPIC": "com.example.legacy", "APNS_APPS_1_CERT_FILE": certificates.p12,
            "APNS_APPS_1_CERT_PASSWORD": certPassword,
            "COLLECTOR_WINDOW_MS": "20", "WORKER_ID": "secretive",
        ], logFile: "\(directory)/worker.log")
        try await eventually(timeout: .seconds(30)) { apns.answeredCount >= 30 }
        try await eventually(timeout: .seconds(10)) {
            let queued = try await client.length(self.keys.queue)
            let claimed = try await client.claimedCount(self.keys.processing(worker: "secretive"))
            return queued == 0 && claimed == 0
        }
        worker.signal(SIGTERM)
        let status = await worker.waitForExit(timeout: 30)
        XCTAssertEqual(status, 0, worker.log)
        await apns.stop()

        let log = worker.log
        XCTAssertTrue(log.contains("PipelineService(worker: secretive)"), "trace output of the service lifecycle is present:\n\(log.prefix(3000))")
        XCTAssertTrue(log.contains("worker stopped"), "the worker ran and drained")
        let keyLines = try String(contentsOfFile: apns.keyFile, encoding: .utf8).split(separator: "\n")
            .filter { !$0.hasPrefix("-----") }.map(String.init)
        let secrets = [aclPassword, certPassword] + keyLines
        for secret in secrets {
            XCTAssertFalse(log.contains(secret), "a secret reached the log: \(secret.prefix(4))…")
        }
        // A JWT starts with the Base64 of '{"': no provider token is ever printed.
        XCTAssertFalse(log.contains("eyJ"), "a JWT reached the log")
    }
}
