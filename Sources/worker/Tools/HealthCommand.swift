import ArgumentParser
import Foundation
import PushCore

/// `worker health [--ready]` (docs/tools.md): asks the running worker's `/healthz` (or `/readyz`) on
/// `metrics.listen` and exits 0 when it answers 200, 1 otherwise, printing its one-line answer. What a
/// container's HEALTHCHECK or a probe runs, with no curl in the image. Synchronous on the main thread: one
/// blocking HTTP/1.1 request, never on Swift's cooperative pool.
struct HealthCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "health",
        abstract: "Ask the running worker's /healthz (or /readyz with --ready) on metrics.listen; exit 0 if it answers 200, else 1."
    )

    @Option(name: .long, help: "YAML configuration file (the worker's; environment variables apply too).")
    var config: String?

    @Flag(name: .long, help: "Ask /readyz (Redis reachable, credentials loaded, not draining) instead of /healthz.")
    var ready = false

    @Option(name: .long, help: "Seconds to wait for the answer.")
    var timeout: Double = 2

    func run() throws {
        let configuration: WorkerConfiguration
        do {
            configuration = try ConfigurationLoader().load(file: config)
        } catch {
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            throw ExitCode(2)
        }
        guard let listen = try? ListenAddress.parse(configuration.metricsListen) else {
            FileHandle.standardError.write(Data("error: metrics.listen is empty: the worker serves no health endpoints\n".utf8))
            throw ExitCode(2)
        }
        let path = ready ? "/readyz" : "/healthz"
        do {
            let answer = try HealthProbe.get(host: HealthProbe.connectHost(listen.host), port: listen.port, path: path,
                                             timeout: max(0.1, timeout))
            print("\(path): \(answer.status) \(answer.body.trimmingCharacters(in: .whitespacesAndNewlines))")
            if answer.status != 200 { throw ExitCode(1) }
        } catch let error as HealthProbe.Failure {
            print("\(path): \(error)")
            throw ExitCode(1)
        }
    }
}

/// One plain HTTP/1.1 GET to the worker's own listener, on a blocking socket with a deadline.
enum HealthProbe {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// A wildcard listen address is asked on loopback.
    static func connectHost(_ host: String) -> String {
        switch host {
        case "0.0.0.0", "": return "127.0.0.1"
        case "::": return "::1"
        default: return host
        }
    }

    static func get(host: String, port: Int, path: String, timeout: Double) throws -> (status: Int, body: String) {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &list) == 0, let first = list else {
            throw Failure(description: "cannot resolve \(host)")
        }
        defer { freeaddrinfo(list) }
        let fd = socket(first.pointee.ai_family, first.pointee.ai_socktype, first.pointee.ai_protocol)
        guard fd >= 0 else { throw Failure(description: "socket: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var interval = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - Double(Int(timeout))) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &interval, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &interval, socklen_t(MemoryLayout<timeval>.size))
        guard connect(fd, first.pointee.ai_addr, first.pointee.ai_addrlen) == 0 else {
            throw Failure(description: "no answer at \(host):\(port) (\(String(cString: strerror(errno))))")
        }
        let request = Array("GET \(path) HTTP/1.1\r\nHost: \(host)\r\nConnection: close\r\n\r\n".utf8)
        guard request.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == request.count else {
            throw Failure(description: "cannot send the request (\(String(cString: strerror(errno))))")
        }
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while response.count < 65536 {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 { response += buffer[..<count]; continue }
            if count == 0 { break }
            if errno == EINTR { continue }
            throw Failure(description: "no answer within \(timeout) s (\(String(cString: strerror(errno))))")
        }
        let text = String(decoding: response, as: UTF8.self)
        let parts = text.components(separatedBy: "\r\n\r\n")
        let statusLine = parts.first?.split(separator: "\r\n").first ?? ""
        let fields = statusLine.split(separator: " ")
        guard fields.count >= 2, fields[0].hasPrefix("HTTP/"), let status = Int(fields[1]) else {
            throw Failure(description: "not an HTTP answer")
        }
        return (status, parts.dropFirst().joined(separator: "\r\n\r\n"))
    }
}
