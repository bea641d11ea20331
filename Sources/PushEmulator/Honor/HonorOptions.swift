import ArgumentParser

/// The Honor side's `push-emulator` flags (`--honor-*`): its apps and faults. Client secrets are read from files.
struct HonorOptions: EmulatedServiceOptions {
    typealias Service = HonorCore

    @Option(name: .customLong("honor-app"), parsing: .singleValue,
            help: "APP_ID:CLIENT_ID:SECRET_FILE, an Honor app: its app id, its OAuth client id and the file holding the client secret; repeatable.")
    var honorApps: [String] = []
    @Flag(name: .customLong("honor-flow-control"), help: "Answer every Honor send HTTP 503.") var honorFlowControl = false
    @Option(name: .customLong("honor-latency-ms"), help: "Answer every Honor send this long after it came.") var honorLatency = 0
    @Option(name: .customLong("honor-tokens-per-s"), help: "Honor tokens per second per app; more are answered code 429.") var honorTokensPerS: Int?

    func apply(to configuration: inout EmulatorConfiguration) throws {
        for text in honorApps {
            let parts = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 3, !parts[0].isEmpty, !parts[1].isEmpty else {
                throw ValidationError("--honor-app '\(text)' is not APP_ID:CLIENT_ID:SECRET_FILE")
            }
            configuration.honor.apps.append(.init(appID: parts[0], clientID: parts[1],
                                                  clientSecret: try SecretFileFlag.read(parts[2], flag: "--honor-app")))
        }
        configuration.honor.faults.flowControl = honorFlowControl
        configuration.honor.faults.latencyMillis = honorLatency
        configuration.honor.faults.tokensPerSecond = honorTokensPerS
    }
}
