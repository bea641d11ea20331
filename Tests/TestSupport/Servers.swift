import Foundation
import PushCore

/// A free loopback port whose cluster bus port (port + 10000) is free too, as a cluster node needs.
public func freeClusterPort() -> Int {
    while true {
        let port = Int.random(in: 20_000...40_000)
        if !waitForPort(port, timeout: 0) && !waitForPort(port + 10_000, timeout: 0) { return port }
    }
}

/// A free loopback port below the kernel's ephemeral range (32768 and up) and below `freeClusterPort`'s: one a
/// test may leave closed for a while and listen on again later, which no outgoing connection will take meanwhile.
public func freeReservedPort() -> Int {
    while true {
        let port = Int.random(in: 10_000...19_999)
        if !waitForPort(port, timeout: 0) { return port }
    }
}

/// A loopback port nobody listens on right now.
public func freePort() -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
    _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// A socket connected to the loopback `port`, or nil when nothing accepts there; the caller closes it.
private func connectedLoopbackSocket(_ port: Int) -> Int32? {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = UInt16(port).bigEndian
    let result = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    if result == 0 { return fd }
    close(fd)
    return nil
}

/// True once the plain-text Redis on the loopback `port` answers PING with anything but `-LOADING` (PONG, or
/// NOAUTH where a password is required), tried until `timeout`.
public func answersPing(_ port: Int, timeout: TimeInterval = 30) -> Bool {
    let end = Date().addingTimeInterval(timeout)
    repeat {
        var reply = [UInt8](repeating: 0, count: 64)
        var received = 0
        if let fd = connectedLoopbackSocket(port) {
            let ping = Array("PING\r\n".utf8)
            if send(fd, ping, ping.count, Int32(MSG_NOSIGNAL)) == ping.count {
                received = recv(fd, &reply, reply.count, 0)
            }
            close(fd)
        }
        if received > 0, !String(decoding: reply[0..<received], as: UTF8.self).hasPrefix("-LOADING") { return true }
        usleep(20_000)
    } while Date() < end
    return false
}

/// True once something listens on the loopback `port` (tried at least once, then until `timeout`).
public func waitForPort(_ port: Int, timeout: TimeInterval = 10) -> Bool {
    let end = Date().addingTimeInterval(timeout)
    repeat {
        if let fd = connectedLoopbackSocket(port) {
            close(fd)
            return true
        }
        if timeout > 0 { usleep(20_000) }
    } while Date() < end
    return false
}

public func makeTemporaryDirectory(_ name: String) -> String {
    let path = NSTemporaryDirectory() + "push-tests-\(name)-\(UUID().uuidString.prefix(8))"
    try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

/// Runs a command to completion; returns its exit status and output.
@discardableResult
public func runCommand(_ path: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
}

public func which(_ name: String) -> String? {
    for dir in ["/usr/sbin", "/usr/bin", "/usr/local/bin", "/usr/local/sbin", "/sbin", "/bin"] {
        let path = "\(dir)/\(name)"
        if FileManager.default.isExecutableFile(atPath: path) { return path }
    }
    return nil
}

/// A real redis-server on a loopback port, with its own data folder; optionally TLS only
/// (`rediss://`, a CA of its own in `caFile`) and with extra server arguments (`--requirepass`, ACLs).
public final class RedisServer: @unchecked Sendable {
    public let port: Int
    public let directory: String
    private var process: Process?
    public let persistent: Bool
    public let tls: Bool
    public private(set) var caFile = ""
    private let extraArguments: [String]

    public init(persistent: Bool = false, tls: Bool = false, arguments: [String] = [], port: Int? = nil) throws {
        self.port = port ?? freePort()
        directory = makeTemporaryDirectory("redis")
        self.persistent = persistent
        self.tls = tls
        self.extraArguments = arguments
        if tls { caFile = try generateServerCertificate(in: directory) }
        try start()
    }

    public var url: RedisURL {
        var url = RedisURL(host: "127.0.0.1", port: port)
        url.tls = tls
        return url
    }
    public var urlString: String { "\(tls ? "rediss" : "redis")://127.0.0.1:\(port)/0" }

    public func start() throws {
        guard let binary = which("redis-server") else { throw TestSetupError("redis-server is not installed (apt-get install redis-server)") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        var arguments = ["--bind", "127.0.0.1", "--dir", directory, "--save", "",
                         "--appendonly", persistent ? "yes" : "no", "--appendfsync", "always"]
        arguments += tls
            ? ["--port", "0", "--tls-port", "\(port)", "--tls-cert-file", "\(directory)/server.pem",
               "--tls-key-file", "\(directory)/server.key", "--tls-ca-cert-file", caFile, "--tls-auth-clients", "no"]
            : ["--port", "\(port)"]
        process.arguments = arguments + extraArguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
        guard waitForPort(port) else { throw TestSetupError("redis-server did not start on port \(port)") }
        // A restarted server with an append-only file answers LOADING until it has read it back.
        if !tls, !answersPing(port) { throw TestSetupError("redis-server on port \(port) still loading after 30 s") }
    }

    /// Freezes (SIGSTOP) or thaws (SIGCONT) the server: a replica that stops taking the primary's stream.
    public func signal(_ signal: Int32) {
        guard let process else { return }
        Foundation.kill(process.processIdentifier, signal)
    }

    /// Stops the server abruptly (SIGKILL): with persistence on, what was written survives a start().
    public func kill() {
        guard let process else { return }
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        self.process = nil
    }

    /// The server ends with its object, and its folder with it (a test run outside the test command, which gives the
    /// run a temporary directory of its own, would otherwise leave one behind per server).
    deinit {
        kill()
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// A CA and a client certificate it signed, as Apple issues for certificate auth: returns the CA file,
/// a PEM with certificate and key, and the same as PKCS#12 protected by `password`.
public func generateClientCertificate(in directory: String, password: String) throws -> (ca: String, pem: String, p12: String) {
    let openssl = which("openssl") ?? "/usr/bin/openssl"
    let steps: [[String]] = [
        ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "\(directory)/ca.key",
         "-out", "\(directory)/ca.pem", "-days", "30", "-subj", "/CN=Test Push CA"],
        ["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "\(directory)/client.key",
         "-out", "\(directory)/client.csr", "-subj", "/CN=Apple Push Services: com.example.legacy"],
        ["x509", "-req", "-in", "\(directory)/client.csr", "-CA", "\(directory)/ca.pem", "-CAkey", "\(directory)/ca.key",
         "-CAcreateserial", "-out", "\(directory)/client.crt", "-days", "30"],
        ["pkcs12", "-export", "-in", "\(directory)/client.crt", "-inkey", "\(directory)/client.key",
         "-out", "\(directory)/client.p12", "-passout", "pass:\(password)"],
    ]
    for step in steps {
        let result = try runCommand(openssl, step)
        guard result.status == 0 else { throw TestSetupError("openssl \(step[0]) failed: \(result.output)") }
    }
    let pem = try String(contentsOfFile: "\(directory)/client.crt", encoding: .utf8) + String(contentsOfFile: "\(directory)/client.key", encoding: .utf8)
    try pem.write(toFile: "\(directory)/client.pem", atomically: true, encoding: .utf8)
    return ("\(directory)/ca.pem", "\(directory)/client.pem", "\(directory)/client.p12")
}

/// A CA and a server certificate for 127.0.0.1 signed by it (server.pem, server.key); returns the CA file.
public func generateServerCertificate(in directory: String) throws -> String {
    let openssl = which("openssl") ?? "/usr/bin/openssl"
    try "subjectAltName=IP:127.0.0.1,DNS:localhost\n".write(toFile: "\(directory)/san.ext", atomically: true, encoding: .utf8)
    let steps: [[String]] = [
        ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "\(directory)/ca.key",
         "-out", "\(directory)/ca.pem", "-days", "30", "-subj", "/CN=Test Redis CA"],
        ["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "\(directory)/server.key",
         "-out", "\(directory)/server.csr", "-subj", "/CN=127.0.0.1"],
        ["x509", "-req", "-in", "\(directory)/server.csr", "-CA", "\(directory)/ca.pem", "-CAkey", "\(directory)/ca.key",
         "-CAcreateserial", "-out", "\(directory)/server.pem", "-days", "30", "-extfile", "\(directory)/san.ext"],
    ]
    for step in steps {
        let result = try runCommand(openssl, step)
        guard result.status == 0 else { throw TestSetupError("openssl \(step[0]) failed: \(result.output)") }
    }
    return "\(directory)/ca.pem"
}

/// A fresh APNs-style signing key (.p8 is PKCS#8 PEM of a P-256 key).
public func generateP8Key(in directory: String) throws -> String {
    let path = directory + "/AuthKey_TEST.p8"
    let result = try runCommand(which("openssl") ?? "/usr/bin/openssl", [
        "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", path,
    ])
    guard result.status == 0 else { throw TestSetupError("openssl genpkey failed: \(result.output)") }
    return path
}

public func repositoryRoot(file: String = #filePath) -> String {
    var url = URL(fileURLWithPath: file)
    while url.path != "/" {
        url.deleteLastPathComponent()
        if FileManager.default.fileExists(atPath: url.path + "/Package.swift") { return url.path }
    }
    return FileManager.default.currentDirectoryPath
}

public struct TestSetupError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
