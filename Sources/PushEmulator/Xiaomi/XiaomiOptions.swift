import ArgumentParser

/// The Xiaomi side's `push-emulator` flags (`--xiaomi-*`): its apps (quotas, channels), quota day, token answers and
/// faults. AppSecrets are read from files.
struct XiaomiOptions: EmulatedServiceOptions {
    typealias Service = XiaomiCore

    @Option(name: .customLong("xiaomi-app"), parsing: .singleValue,
            help: "SECRET_FILE:PACKAGES[:DAILY_QUOTA[:CHANNELS[:PRIVATE_CHANNELS]]], a Xiaomi app: the file holding its AppSecret, its comma-separated packages, its daily message quota, its registered channel ids, its private (chat) channels, under no quota; repeatable.")
    var xiaomiApps: [String] = []
    @Option(name: .customLong("xiaomi-quota-reset"), help: "When Xiaomi's quota day rolls over, HH:MM+HH:MM.") var xiaomiQuotaReset = "00:00+08:00"
    @Option(name: .customLong("xiaomi-answer"), parsing: .singleValue,
            help: "PREFIX: Xiaomi regIds starting with PREFIX come back in data.bad_regids; repeatable, before the built-in prefixes.")
    var xiaomiAnswers: [String] = []
    @Flag(name: .customLong("xiaomi-flow-control"), help: "Answer every Xiaomi send HTTP 503.") var xiaomiFlowControl = false
    @Option(name: .customLong("xiaomi-latency-ms"), help: "Answer every Xiaomi send this long after it came.") var xiaomiLatency = 0
    @Option(name: .customLong("xiaomi-retry-after"), help: "SECONDS: Xiaomi's 503 answers carry Retry-After: SECONDS.") var xiaomiRetryAfter: Int?
    @Option(name: .customLong("xiaomi-requests-per-s"), help: "Xiaomi sends per second per app; more are answered code 10027.") var xiaomiRequestsPerS: Int?

    func apply(to configuration: inout EmulatorConfiguration) throws {
        for text in xiaomiApps {
            let parts = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
            guard (2...5).contains(parts.count), !parts[1].isEmpty else {
                throw ValidationError("--xiaomi-app '\(text)' is not SECRET_FILE:PACKAGES[:DAILY_QUOTA[:CHANNELS[:PRIVATE_CHANNELS]]]")
            }
            var quota: Int?
            if parts.count > 2, !parts[2].isEmpty {
                guard let value = Int(parts[2]), value >= 0 else { throw ValidationError("--xiaomi-app '\(text)': DAILY_QUOTA is not a number") }
                quota = value
            }
            let channels = parts.count > 3 ? parts[3].split(separator: ",").map(String.init) : []
            let privateChannels = parts.count > 4 ? parts[4].split(separator: ",").map(String.init) : []
            configuration.xiaomi.apps.append(.init(appSecret: try SecretFileFlag.read(parts[0], flag: "--xiaomi-app"),
                                                   packages: parts[1].split(separator: ",").map(String.init),
                                                   channels: channels + privateChannels.filter { !channels.contains($0) },
                                                   dailyQuota: quota, privateChannels: privateChannels))
        }
        configuration.xiaomi.quotaReset = xiaomiQuotaReset
        configuration.xiaomi.tokenAnswers = xiaomiAnswers.map { .init(prefix: $0, reason: "bad_regid") }
            + EmulatorConfiguration.VendorTokenAnswer.xiaomiDefaults
        configuration.xiaomi.faults.flowControl = xiaomiFlowControl
        configuration.xiaomi.faults.latencyMillis = xiaomiLatency
        configuration.xiaomi.faults.retryAfterSeconds = xiaomiRetryAfter
        configuration.xiaomi.faults.requestsPerSecond = xiaomiRequestsPerS
    }
}
