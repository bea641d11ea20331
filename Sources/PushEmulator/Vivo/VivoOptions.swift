import ArgumentParser

/// The vivo side's `push-emulator` flags (`--vivo-*`): its apps and faults. App secrets are read from files.
struct VivoOptions: EmulatedServiceOptions {
    typealias Service = VivoCore

    @Option(name: .customLong("vivo-app"), parsing: .singleValue,
            help: "APP_ID:APP_KEY:SECRET_FILE[:DAILY_QUOTA], a vivo app: its AppID, AppKey, the file holding its AppSecret, the messages it may send a day; repeatable.")
    var vivoApps: [String] = []
    @Flag(name: .customLong("vivo-flow-control"), help: "Answer every vivo call HTTP 503.") var vivoFlowControl = false
    @Option(name: .customLong("vivo-latency-ms"), help: "Answer every vivo call this long after it came.") var vivoLatency = 0
    @Option(name: .customLong("vivo-requests-per-s"), help: "vivo calls per second per app; more are answered 10250.") var vivoRequestsPerS: Int?

    func apply(to configuration: inout EmulatorConfiguration) throws {
        for text in vivoApps {
            let parts = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
            guard (3...4).contains(parts.count), !parts[0].isEmpty, !parts[1].isEmpty else {
                throw ValidationError("--vivo-app '\(text)' is not APP_ID:APP_KEY:SECRET_FILE[:DAILY_QUOTA]")
            }
            var quota: Int?
            if parts.count == 4, !parts[3].isEmpty {
                guard let value = Int(parts[3]), value >= 0 else { throw ValidationError("--vivo-app '\(text)': DAILY_QUOTA is not a number") }
                quota = value
            }
            configuration.vivo.apps.append(.init(appID: parts[0], appKey: parts[1],
                                                 appSecret: try SecretFileFlag.read(parts[2], flag: "--vivo-app"), dailyQuota: quota))
        }
        configuration.vivo.faults.flowControl = vivoFlowControl
        configuration.vivo.faults.latencyMillis = vivoLatency
        configuration.vivo.faults.requestsPerSecond = vivoRequestsPerS
    }
}
