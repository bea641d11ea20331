import Foundation

/// The built `worker` executable, run as a user would run it, configured through environment variables.
public final class WorkerProcess: @unchecked Sendable {
    public let process = Process()
    public let logFile: String

    public static var binaryPath: String {
        let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        return bundle.appendingPathComponent("worker").path
    }

    public init(environment: [String: String], arguments: [String] = ["run"], logFile: String) throws {
        guard FileManager.default.isExecutableFile(atPath: Self.binaryPath) else {
            throw TestSetupError("\(Self.binaryPath) is missing: run `swift build --build-tests` first")
        }
        self.logFile = logFile
        FileManager.default.createFile(atPath: logFile, contents: nil)
        // Started as an operator's shell or systemd starts it: every signal at its default action and none
        // blocked. The test process ignores SIGPIPE (swift-nio does so once it opens a socket) and an ignored
        // signal stays ignored across exec, which would hide a worker that a reset connection kills.
        guard let python = which("python3") else { throw TestSetupError("python3 is not installed") }
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = ["-c", Self.withDefaultSignals, Self.binaryPath] + arguments
        var env = ProcessInfo.processInfo.environment
        // Tests run several workers at once: the metrics listener is off unless a test gives it a port.
        env["METRICS_LISTEN"] = ""
        env.merge(environment) { $1 }
        process.environment = env
        let handle = FileHandle(forWritingAtPath: logFile)
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
    }

    /// Restores the default action of every signal and unblocks all, then becomes the worker (same pid).
    private static let withDefaultSignals = """
        import os, signal, sys
        for number in range(1, signal.NSIG):
            try:
                signal.signal(number, signal.SIG_DFL)
            except (OSError, ValueError):
                pass
        signal.pthread_sigmask(signal.SIG_SETMASK, set())
        os.execv(sys.argv[1], sys.argv[1:])
        """

    public var pid: Int32 { process.processIdentifier }
    public var log: String { (try? String(contentsOfFile: logFile, encoding: .utf8)) ?? "" }

    public func signal(_ number: Int32) { kill(process.processIdentifier, number) }

    /// Waits for exit; nil if it is still running after `timeout`.
    public func waitForExit(timeout: TimeInterval) async -> Int32? {
        let end = Date().addingTimeInterval(timeout)
        while Date() < end {
            if !process.isRunning { return process.terminationStatus }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return nil
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
}
