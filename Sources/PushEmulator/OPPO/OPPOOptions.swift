import ArgumentParser

/// The OPPO side's `push-emulator` flags (`--oppo-*`): its apps and faults. Master secrets are read from files.
struct OPPOOptions: EmulatedServiceOptions {
    typealias Service = OPPOCore

    @Option(name: .customLong("oppo-app"), parsing: .singleValue,
            help: "APP_KEY:SECRET_FILE[:DAILY_QUOTA], an OPPO app: its AppKey, the file holding its MasterSecret, the marketing messages it may send a day; repeatable.")
    var oppoApps: [String] = []
    @Flag(name: .customLong("oppo-flow-control"), help: "Answer every OPPO send code -2.") var oppoFlowControl = false
    @Option(name: .customLong("oppo-latency-ms"), help: "Answer every OPPO send this long after it came.") var oppoLatency = 0
    @Option(name: .customLong("oppo-requests-per-s"), help: "OPPO sends per second per app; more are answered -2.") var oppoRequestsPerS: Int?

    func apply(to configuration: inout EmulatorConfiguration) throws {
        for text in oppoApps {
            let parts = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
            guard (2...3).contains(parts.count), !parts[0].isEmpty else {
                throw ValidationError("--oppo-app '\(text)' is not APP_KEY:SECRET_FILE[:DAILY_QUOTA]")
            }
            var quota: Int?
            if parts.count == 3, !parts[2].isEmpty {
                guard let value = Int(parts[2]), value >= 0 else { throw ValidationError("--oppo-app '\(text)': DAILY_QUOTA is not a number") }
                quota = value
            }
            configuration.oppo.apps.append(.init(appKey: parts[0], masterSecret: try SecretFileFlag.read(parts[1], flag: "--oppo-app"),
                                                 dailyQuota: quota))
        }
        configuration.oppo.faults.flowControl = oppoFlowControl
        configuration.oppo.faults.latencyMillis = oppoLatency
        configuration.oppo.faults.requestsPerSecond = oppoRequestsPerS
    }
}
