import ArgumentParser

/// The Huawei side's `push-emulator` flags (`--huawei-*`): its apps, receipts, service accounts, token answers and
/// faults. Secrets are read from files.
struct HuaweiOptions: EmulatedServiceOptions {
    typealias Service = HuaweiCore

    @Option(name: .customLong("huawei-app"), parsing: .singleValue,
            help: "APP_ID:SECRET_FILE, a Huawei Android app (Push Kit v1): its OAuth client id and the file holding its client secret; repeatable.")
    var huaweiApps: [String] = []
    @Option(name: .customLong("huawei-receipt"), parsing: .singleValue,
            help: "APP_ID:SECRET_FILE:USER_NAME:URL, where a Huawei app's receipts go: signed with the secret in SECRET_FILE and USER_NAME, POSTed to URL (the worker's /receipts/huawei); repeatable.")
    var huaweiReceipts: [String] = []
    @Option(name: .customLong("huawei-service-account"), parsing: .singleValue,
            help: "A Huawei service account key JSON file (project_id, key_id, sub_account, private_key) whose PS256 JWTs v3 sends accept; repeatable.")
    var huaweiServiceAccounts: [String] = []
    @Option(name: .customLong("huawei-jwt-audience"), help: "The aud a v3 JWT must carry (besides this emulator's own token URL).")
    var huaweiJWTAudience = "https://oauth-login.cloud.huawei.com/oauth2/v3/token"
    @Option(name: .customLong("huawei-token-lifetime"), help: "expires_in (seconds) of the Huawei access tokens issued.")
    var huaweiTokenLifetime: Int64 = 3600
    @Option(name: .customLong("huawei-answer"), parsing: .singleValue,
            help: "PREFIX=REASON: Huawei tokens starting with PREFIX are refused with that v3 reason (noRight, tokenFormatError, ...; v1 lists them in illegal_tokens); repeatable, before the built-in prefixes.")
    var huaweiAnswers: [String] = []
    @Flag(name: .customLong("huawei-flow-control"), help: "Answer every Huawei send HTTP 503 (flow control).") var huaweiFlowControl = false
    @Option(name: .customLong("huawei-latency-ms"), help: "Answer every Huawei send this long after it came (a server at capacity).") var huaweiLatency = 0
    @Option(name: .customLong("huawei-requests-per-s"), help: "Huawei sends per second per app; more are answered 503.") var huaweiRequestsPerS: Int?
    @Option(name: .customLong("huawei-tokens-per-s"), help: "Huawei tokens per second per app (Huawei counts devices); more are answered 503.") var huaweiTokensPerS: Int?

    func apply(to configuration: inout EmulatorConfiguration) throws {
        for text in huaweiApps {
            let parts = text.split(separator: ":", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { throw ValidationError("--huawei-app '\(text)' is not APP_ID:SECRET_FILE") }
            configuration.huawei.apps.append(.init(appID: parts[0], clientSecret: try SecretFileFlag.read(parts[1], flag: "--huawei-app")))
        }
        for text in huaweiReceipts {
            let parts = text.split(separator: ":", maxSplits: 3, omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 4, !parts[3].isEmpty,
                  let index = configuration.huawei.apps.firstIndex(where: { $0.appID == parts[0] }) else {
                throw ValidationError("--huawei-receipt '\(text)' is not APP_ID:SECRET_FILE:USER_NAME:URL of an app given with --huawei-app")
            }
            configuration.huawei.apps[index].receipts = .init(url: parts[3], secret: try SecretFileFlag.read(parts[1], flag: "--huawei-receipt"),
                                                              userName: parts[2])
        }
        configuration.huawei.serviceAccounts = try huaweiServiceAccounts.map { try .init(keyJSONFile: $0) }
        configuration.huawei.jwtAudience = huaweiJWTAudience
        configuration.huawei.accessTokenLifetimeSeconds = huaweiTokenLifetime
        let scripted = try huaweiAnswers.map { text -> EmulatorConfiguration.VendorTokenAnswer in
            let parts = text.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else { throw ValidationError("--huawei-answer '\(text)' is not PREFIX=REASON") }
            return .init(prefix: parts[0], reason: parts[1])
        }
        configuration.huawei.tokenAnswers = scripted + EmulatorConfiguration.VendorTokenAnswer.huaweiDefaults
        configuration.huawei.faults.flowControl = huaweiFlowControl
        configuration.huawei.faults.latencyMillis = huaweiLatency
        configuration.huawei.faults.requestsPerSecond = huaweiRequestsPerS
        configuration.huawei.faults.tokensPerSecond = huaweiTokensPerS
    }
}
