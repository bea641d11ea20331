import Foundation
import XCTest

/// Temp dir with a self-signed certificate for localhost / 127.0.0.1 (and a second, unrelated one).
final class TestCertificates {
    let directory: URL
    var cert: String { directory.appendingPathComponent("cert.pem").path }
    var key: String { directory.appendingPathComponent("key.pem").path }
    var otherCert: String { directory.appendingPathComponent("other-cert.pem").path }

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("h2test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for name in ["", "other-"] {
            try run("/usr/bin/openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                                         "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
                                         "-days", "2", "-keyout", directory.appendingPathComponent("\(name)key.pem").path,
                                         "-out", directory.appendingPathComponent("\(name)cert.pem").path])
        }
    }

    func run(_ tool: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw NSError(domain: "\(tool) failed", code: Int(process.terminationStatus)) }
    }

    deinit { try? FileManager.default.removeItem(at: directory) }
}

/// What the fake server saw on one connection.
struct ServerConnectionRecord {
    var maxConcurrent: Int
    var maxBeforeFirstResponse: Int
    var answered: Int
    var paths: [String]
    var violations: Int
    var refused: Int
    var pings: Int
    /// Streams the client reset (RST_STREAM) while the server still counted them open.
    var clientResets: Int
}

struct ServerRecord {
    var connections: [ServerConnectionRecord]
    var refusedTotal: Int
    var protocolErrors: Int
    var allPaths: [String] { connections.flatMap(\.paths) }
}

/// h2_fake_server.py as a subprocess on a free loopback port (python3-h2 from Debian, so /usr/bin/python3).
final class FakeServer {
    let process = Process()
    let port: Int
    let recordPath: String

    init(certificates: TestCertificates, _ arguments: [String]) throws {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("h2_fake_server.py").path
        recordPath = certificates.directory.appendingPathComponent("record-\(UUID().uuidString).json").path
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [script, "--cert", certificates.cert, "--key", certificates.key, "--record", recordPath] + arguments
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
        guard let text = String(data: line, encoding: .utf8)?.trimmingCharacters(in: .whitespacesAndNewlines),
              let port = Int(text) else {
            process.terminate()
            throw NSError(domain: "fake server did not start", code: 1)
        }
        self.port = port
    }

    /// Stops the server (SIGTERM: it writes its final record) and returns what it saw.
    func stop() throws -> ServerRecord {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        let data = try Data(contentsOf: URL(fileURLWithPath: recordPath))
        let json = try JSONSerialization.jsonObject(with: data) as! [String: Any]
        let connections = (json["connections"] as! [[String: Any]]).map { c in
            ServerConnectionRecord(maxConcurrent: c["max_concurrent"] as! Int,
                                   maxBeforeFirstResponse: c["max_before_first_response"] as! Int,
                                   answered: c["answered"] as! Int, paths: c["paths"] as! [String],
                                   violations: c["violations"] as! Int, refused: c["refused"] as! Int,
                                   pings: c["pings"] as! Int, clientResets: c["client_resets"] as? Int ?? 0)
        }
        return ServerRecord(connections: connections, refusedTotal: json["refused_total"] as! Int,
                            protocolErrors: json["protocol_errors"] as! Int)
    }

    deinit {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
    }
}
