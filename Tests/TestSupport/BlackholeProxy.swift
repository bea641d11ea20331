import Foundation

/// A TCP proxy in front of a server, which a test can black-hole (a partition between one client and the
/// server: silence, connections left hanging), make reset connections (RST) and heal (`blackhole_proxy.py`,
/// run with python3).
public final class BlackholeProxy: @unchecked Sendable {
    public let port: Int
    private let process = Process()
    private let resetLog = makeTemporaryDirectory("proxy") + "/resets"

    public init(targetPort: Int) throws {
        port = freePort()
        guard let python = which("python3") else { throw TestSetupError("python3 is not installed") }
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [repositoryRoot() + "/Tests/TestSupport/blackhole_proxy.py", String(port), String(targetPort), resetLog]
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        guard waitForPort(port) else { throw TestSetupError("the black-hole proxy did not start on port \(port)") }
    }

    /// From now on nothing passes, and new connections hang.
    public func blackhole() { kill(process.processIdentifier, SIGUSR1) }

    /// Resets every open connection (RST) and, until `heal()`, each new one once its client has sent a few
    /// KB: a server that refuses and resets connections while the client writes.
    public func startResetting() { kill(process.processIdentifier, SIGHUP) }

    /// How many connections the proxy has reset so far.
    public var resets: Int {
        ((try? String(contentsOfFile: resetLog, encoding: .utf8)) ?? "").split(separator: "\n").count
    }

    /// Closes every connection from before and forwards new ones again (and stops resetting).
    public func heal() { kill(process.processIdentifier, SIGUSR2) }

    public func stop() {
        guard process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
    }

    deinit { stop() }
}
