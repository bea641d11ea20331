@testable import APNsProvider
import Foundation
import Logging
import PushCore
import ProviderKit
import Pusher
import TestSupport
import XCTest

/// Requests a server never processed (refused streams, streams above a GOAWAY) go again without spending an
/// attempt, but only a few times in a row: a server that accepts connections and then refuses everything must
/// end in the retry budget, not keep a lane sending (or reconnecting) forever. Our own HTTP/2 sessions against
/// HTTP2ClientTests' python3-h2 server, which can refuse every stream or go away before processing anything.
final class UnprocessedRequestTests: XCTestCase {
    private func settings(_ server: RefusingServer, attempts: Int) -> TransportSettings {
        var settings = TransportSettings(baseURL: "https://localhost:\(server.port)")
        settings.caFile = server.certificateFile
        settings.driver = .nghttp2
        settings.retry.maxAttempts = attempts
        settings.retry.baseDelayMillis = 5
        settings.retry.maxDelayMillis = 20
        return settings
    }

    private func job(_ tokens: [String]) -> PushJob {
        let headers = PushHeaders(topic: "com.example.chat", appTopic: "com.example.chat", pushType: "alert",
                                  priority: 10, expiration: 0, collapseID: nil)
        return PushJob(message: PushMessage(seq: 1, id: "m1", kind: .private, uuid: nil, headers: headers,
                                            payload: Array(#"{"aps":{"alert":"hi"}}"#.utf8), tokens: tokens, enqueuedAtMillis: nil))
    }

    func testAServerThatRefusesEveryStreamEndsInTheRetryBudget() async throws {
        let server = try RefusingServer(["--refuse-every", "1"])
        let logs = CapturedLogs()
        let box = ResolutionBox()
        let started = Date()
        let transport = try Scheduler(settings: settings(server, attempts: 3), provider: nil,
                                          logger: logs.logger(level: .info), sink: box.append)
        let tokens = (0..<20).map { token("a1", $0) }
        transport.submit([job(tokens)])
        let results = try await box.wait(for: tokens.count, timeout: 60)
        let elapsed = Date().timeIntervalSince(started)
        if results.count < tokens.count { transport.abort() }  // still spinning: end it, the test has failed
        await transport.finish()
        let expected = TokenOutcome.failed(reason: "RefusedStream", status: nil, attempts: 3)
        XCTAssertEqual(results.filter { $0.outcome != expected }.map { "\($0.outcome)" }, [])
        XCTAssertEqual(Set(results.map(\.token)).count, tokens.count)
        let record = try server.stop()
        // Each attempt: three free re-sends, then the fourth refusal spends it.
        XCTAssertEqual(record["refused_total"] as? Int, tokens.count * 3 * 4, "\(record)")
        let notices = logs.lines.filter { $0.level >= .info && $0.message.contains("not processed") }
        XCTAssertGreaterThanOrEqual(notices.count, 1, "the operator is told")
        XCTAssertLessThanOrEqual(notices.count, Int(elapsed / 5) + 1, "rate-limited: \(notices.map(\.message))")
    }

    func testAServerThatGoesAwayBeforeProcessingAnythingEndsInTheRetryBudget() async throws {
        let server = try RefusingServer(["--goaway-unprocessed"])
        let box = ResolutionBox()
        let transport = try Scheduler(settings: settings(server, attempts: 2), provider: nil, sink: box.append)
        transport.submit([job([token("a1", 1)])])
        // Every connection ends unanswered: reconnects back off from 100 ms to 5 s, about 11 s for eight.
        let results = try await box.wait(for: 1, timeout: 60)
        if results.isEmpty { transport.abort() }  // still reconnecting: end it, the test has failed
        await transport.finish()
        XCTAssertEqual(results.map(\.outcome), [.failed(reason: "GoawayUnprocessed", status: nil, attempts: 2)])
        let record = try server.stop()
        XCTAssertEqual(record["goaways_unprocessed"] as? Int, 2 * 4, "one request per connection, four per attempt: \(record)")
    }
}

/// h2_fake_server.py (HTTP2ClientTests) as a subprocess on a free loopback port, with a certificate of its own.
private final class RefusingServer {
    let process = Process()
    let port: Int
    let directory: String
    let certificateFile: String
    let recordFile: String

    init(_ arguments: [String]) throws {
        let directory = makeTemporaryDirectory("h2fake")
        let certificateFile = directory + "/cert.pem"
        let recordFile = directory + "/record.json"
        self.directory = directory
        self.certificateFile = certificateFile
        self.recordFile = recordFile
        try runCommand("/usr/bin/openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                                            "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
                                            "-days", "2", "-keyout", directory + "/key.pem", "-out", certificateFile])
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("HTTP2ClientTests/h2_fake_server.py").path
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [script, "--cert", certificateFile, "--key", directory + "/key.pem", "--record", recordFile,
                             "--lifetime", "300"] + arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        var line = Data()
        let deadline = Date().addingTimeInterval(15)
        while !line.contains(UInt8(ascii: "\n")) && Date() < deadline {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        guard let port = Int(String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) else {
            process.terminate()
            throw NSError(domain: "h2_fake_server.py did not start", code: 1)
        }
        self.port = port
    }

    /// Stops the server (it writes its final record) and returns what it saw.
    func stop() throws -> [String: Any] {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        let data = try Data(contentsOf: URL(fileURLWithPath: recordFile))
        return try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
    }

    deinit {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// A log handler that keeps every line in memory, for counting what a transport logged.
