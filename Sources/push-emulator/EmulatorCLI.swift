import PushEmulator
import ArgumentParser
import Foundation

@main
struct EmulatorCLI: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push-emulator",
        abstract: "An \(EmulatedServices.spelledOut(["APNs", "FCM"] + EmulatedServices.names.map(\.title))) stand-in: HTTP/2 (and HTTP/1.1 for the vendors) over TLS, each vendor's checks and answers, and injectable faults.",
        discussion: """
        Prints `listening on https://HOST:PORT` when ready, `fcm listening on https://HOST:PORT` with --fcm-port and
        `vendor listening on https://HOST:PORT` with --vendor-port.
        GET /_emulator/stats returns counters as JSON; \(EmulatedServices.spelledOut(EmulatedServices.names.map { "/_emulator/\($0.name)/stats" })) the vendors'.
        SIGTERM or SIGINT prints the counters and exits 0.
        """
    )

    /// A client that resets its connection must not end the emulator (swift-nio ignores SIGPIPE once it opens
    /// a socket; this does not rely on it).
    static func main() async {
        signal(SIGPIPE, SIG_IGN)
        await main(nil)
    }

    @Option(help: "Address to listen on.") var host = "127.0.0.1"
    @Option(help: "Port (0 picks a free one; the chosen one is printed).") var port = 2197
    @Option(name: .customLong("cert"), help: "PEM certificate to serve (default: a generated self-signed one).") var certificate: String?
    @Option(name: .customLong("key"), help: "PEM private key for --cert.") var privateKey: String?
    @Option(name: .customLong("cert-name"), parsing: .singleValue,
            help: "Another host name for the generated certificate (e.g. the emulator's name in docker-compose); repeatable.")
    var certificateNames: [String] = []
    @Option(name: .customLong("write-ca"), help: "Write the certificate clients must trust to this file.") var writeCA: String?
    @Option(name: .customLong("client-ca"), help: "Require client certificates signed by this CA (certificate-based auth).") var clientCA: String?
    @Option(name: .customLong("provider-key"), parsing: .singleValue,
            help: "KEY_ID:TEAM_ID:FILE, a signing key (.p8 or public PEM) whose JWTs are accepted; repeatable.")
    var providerKeys: [String] = []
    @Option(name: .customLong("fcm-service-account"), parsing: .singleValue,
            help: "A service account JSON key file whose RS256 assertions the FCM token endpoint (POST /token) accepts; repeatable.")
    var fcmServiceAccounts: [String] = []
    @Option(name: .customLong("fcm-token-lifetime"), help: "expires_in (seconds) of the FCM access tokens issued.")
    var fcmTokenLifetime: Int64 = 3600
    @Option(name: .customLong("fcm-port"),
            help: "Also listen here with FCM's stream rule (100 streams from the first SETTINGS; 0 picks a free port). FCM's paths are answered on both ports.")
    var fcmPort: Int?
    @Option(name: .customLong("fcm-max-streams"), help: "SETTINGS_MAX_CONCURRENT_STREAMS of the --fcm-port listener (FCM: 100).")
    var fcmMaxStreams = 100
    @Option(name: .customLong("fcm-answer"), parsing: .singleValue,
            help: "PREFIX=ERROR_CODE: FCM registration tokens starting with PREFIX get that error (UNREGISTERED, INVALID_ARGUMENT, SENDER_ID_MISMATCH, THIRD_PARTY_AUTH_ERROR, PERMISSION_DENIED, QUOTA_EXCEEDED, UNAVAILABLE, INTERNAL); repeatable, before the built-in prefixes.")
    var fcmAnswers: [String] = []
    @Option(name: .customLong("fcm-quota-rate"), help: "Share 0...1 of good FCM requests answered 429 QUOTA_EXCEEDED.") var fcmQuotaRate = 0.0
    @Option(name: .customLong("fcm-unavailable-rate"), help: "Share 0...1 of good FCM requests answered 503 UNAVAILABLE.") var fcmUnavailableRate = 0.0
    @Option(name: .customLong("fcm-retry-after"), help: "Retry-After seconds on FCM's 429 and 503 answers (default: none).") var fcmRetryAfter: Int?
    @Option(name: .customLong("fcm-device-rate"), help: "Messages per minute one FCM token may receive; more are answered 429 QUOTA_EXCEEDED naming the device (default: not modelled).") var fcmDeviceRate: Int?
    @Flag(name: .customLong("fcm-retry-after-date"), help: "Send --fcm-retry-after as an HTTP date instead of seconds.") var fcmRetryAfterDate = false
    @Option(name: .customLong("fcm-latency-ms"), help: "Added to every FCM messages:send answer.") var fcmLatency = 0
    @Option(name: .customLong("fcm-jitter-ms"), help: "Random extra FCM latency, 0...N ms.") var fcmJitter = 0
    @Option(name: .customLong("fcm-goaway-after"), help: "Send GOAWAY after this many FCM messages:send requests on a connection.") var fcmGoawayAfter: Int?
    @Option(name: .customLong("fcm-revoke-every"), help: "Revoke every FCM access token issued so far every N seconds.") var fcmRevokeEvery: Int?
    @Option(name: .customLong("fcm-token-down-for"), help: "The FCM token endpoint answers 503 for the first N seconds.") var fcmTokenDownFor: Int?
    @Option(name: .customLong("fcm-record"), help: "Append every delivered FCM message to this file as a JSON line.") var fcmRecord: String?
    @Option(name: .customLong("vendor-port"),
            help: "Also listen here for \(EmulatedServices.spelledOut(EmulatedServices.names.map(\.vendor))) clients, offering h2 and http/1.1 by ALPN (0 picks a free port). Their paths are answered on every port.")
    var vendorPort: Int?
    @Option(name: .customLong("vendor-max-streams"), help: "SETTINGS_MAX_CONCURRENT_STREAMS of --vendor-port's HTTP/2 connections.")
    var vendorMaxStreams = 100
    @Flag(name: .customLong("vendor-http1-only"), help: "Offer http/1.1 alone by ALPN on --vendor-port, as a vendor host without HTTP/2.")
    var vendorHTTP1Only = false
    /// Each vendor side's flags (`--<vendor>-*`), declared in its folder and listed in `EmulatedServices.swift`.
    @OptionGroup var services: EmulatedServices
    @Option(name: .customLong("topic"), parsing: .singleValue, help: "A bundle id that may be pushed to; repeatable (default: any).")
    var topics: [String] = []
    @Option(name: .customLong("initial-streams"), help: "SETTINGS_MAX_CONCURRENT_STREAMS of a new connection (Apple: 1).") var initialStreams = 1
    @Option(name: .customLong("max-streams"), help: "SETTINGS_MAX_CONCURRENT_STREAMS after the first authenticated request.") var maxStreams = 1000
    @Flag(name: .customLong("collapse-on-error"), help: "Drop a connection's stream limit to 1 after an error answer, restore it after a success (Apple's behaviour).")
    var collapseOnError = false
    @Option(name: .customLong("goaway-after"), help: "Send GOAWAY after this many requests on a connection.") var goawayAfter: Int?
    @Option(name: .customLong("drop-after"), help: "Drop a connection without answering its N-th request.") var dropAfter: Int?
    @Option(name: .customLong("reset-limit"), help: "RST_STREAM frames per 30 s tolerated before closing a connection.") var resetLimit = 1_000_000
    @Option(name: .customLong("latency-ms"), help: "Added to every answer.") var latency = 0
    @Option(name: .customLong("jitter-ms"), help: "Random extra latency, 0...N ms.") var jitter = 0
    @Option(name: .customLong("failure-rate"), help: "Share 0...1 of good requests answered 429/500/503.") var failureRate = 0.0
    @Option(name: .customLong("failure-statuses"), help: "Comma-separated statuses for --failure-rate.") var failureStatuses = "429,500,503"
    @Option(name: .customLong("unregistered"), parsing: .singleValue, help: "TOKEN[@MS]: answered 410 Unregistered (timestamp MS); repeatable.")
    var unregistered: [String] = []
    @Option(name: .customLong("token-topic"), parsing: .singleValue, help: "TOKEN=TOPIC: the token belongs to that topic only; repeatable.")
    var tokenTopics: [String] = []
    @Option(name: .customLong("answer"), parsing: .singleValue,
            help: "PREFIX=STATUS:REASON[@MS]: tokens starting with PREFIX get that answer (e.g. 5030=503:ServiceUnavailable, 410a=410:Unregistered@1700000000000); repeatable.")
    var answers: [String] = []
    @Option(help: "Append every delivered notification to this file as a JSON line.") var record: String?
    @Option(help: "Event-loop threads.") var threads = 1

    func run() async throws {
        var configuration = EmulatorConfiguration()
        configuration.host = host
        configuration.port = port
        configuration.certificateFile = certificate
        configuration.privateKeyFile = privateKey
        configuration.caOutputFile = writeCA
        configuration.certificateNames = certificateNames
        configuration.clientCAFile = clientCA
        configuration.topics = topics
        configuration.initialMaxConcurrentStreams = initialStreams
        configuration.maxConcurrentStreams = maxStreams
        configuration.collapseStreamsOnError = collapseOnError
        configuration.goawayAfterStreams = goawayAfter
        configuration.dropAfterRequests = dropAfter
        configuration.resetLimit = resetLimit
        configuration.latencyMillis = latency
        configuration.jitterMillis = jitter
        configuration.failureRate = failureRate
        configuration.failureStatuses = failureStatuses.split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        configuration.recordFile = record
        configuration.threads = threads
        for text in providerKeys {
            let parts = text.split(separator: ":", maxSplits: 2).map(String.init)
            guard parts.count == 3 else { throw ValidationError("--provider-key '\(text)' is not KEY_ID:TEAM_ID:FILE") }
            configuration.keys.append(.init(keyID: parts[0], teamID: parts[1], keyFile: parts[2]))
        }
        configuration.fcmServiceAccounts = try fcmServiceAccounts.map { try .init(serviceAccountFile: $0) }
        configuration.fcmAccessTokenLifetimeSeconds = fcmTokenLifetime
        configuration.fcmPort = fcmPort
        configuration.fcmMaxConcurrentStreams = fcmMaxStreams
        var scripted: [EmulatorConfiguration.FCMTokenAnswer] = []
        for text in fcmAnswers {
            let parts = text.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, !parts[0].isEmpty, FCMError.named(parts[1]) != nil else {
                throw ValidationError("--fcm-answer '\(text)' is not PREFIX=ERROR_CODE with a known FCM error code")
            }
            scripted.append(.init(prefix: parts[0], errorCode: parts[1].uppercased()))
        }
        configuration.fcmTokenAnswers = scripted + EmulatorConfiguration.FCMTokenAnswer.defaults
        configuration.fcmFaults.quotaExceededRate = fcmQuotaRate
        configuration.fcmFaults.unavailableRate = fcmUnavailableRate
        configuration.fcmFaults.retryAfterSeconds = fcmRetryAfter
        configuration.fcmFaults.deviceRatePerMinute = fcmDeviceRate
        configuration.fcmFaults.retryAfterAsHTTPDate = fcmRetryAfterDate
        configuration.fcmFaults.latencyMillis = fcmLatency
        configuration.fcmFaults.jitterMillis = fcmJitter
        configuration.fcmFaults.goawayAfterStreams = fcmGoawayAfter
        configuration.fcmRevokeTokensEverySeconds = fcmRevokeEvery
        configuration.fcmTokenEndpointDownForSeconds = fcmTokenDownFor
        configuration.fcmRecordFile = fcmRecord
        try configureVendors(&configuration)
        for text in unregistered {
            let parts = text.split(separator: "@").map(String.init)
            let since = parts.count > 1 ? Int64(parts[1]) : nil
            configuration.unregistered[parts[0].lowercased()] = since ?? Int64(Date().timeIntervalSince1970 * 1000)
        }
        for text in tokenTopics {
            let parts = text.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { throw ValidationError("--token-topic '\(text)' is not TOKEN=TOPIC") }
            configuration.tokenTopics[parts[0].lowercased()] = parts[1]
        }
        for text in answers {
            let parts = text.split(separator: "=", maxSplits: 1).map(String.init)
            let answer = parts.count == 2 ? parts[1].split(separator: ":", maxSplits: 1).map(String.init) : []
            guard answer.count == 2, let status = Int(answer[0]) else {
                throw ValidationError("--answer '\(text)' is not PREFIX=STATUS:REASON[@MS]")
            }
            let reason = answer[1].split(separator: "@").map(String.init)
            configuration.scripted.append(.init(prefix: parts[0], status: status, reason: reason[0],
                                                timestamp: reason.count > 1 ? Int64(reason[1]) : nil))
        }

        let emulator = try PushEmulator(configuration: configuration)
        let port = try await emulator.start()
        say("listening on https://\(host):\(port)")
        if fcmPort != nil { say("fcm listening on https://\(host):\(emulator.fcmPort)") }
        if vendorPort != nil { say("vendor listening on https://\(host):\(emulator.vendorPort)") }
        let stop = { @Sendable (name: String) in
            say("\(name): \(emulator.stats.json)")
            Foundation.exit(0)
        }
        var sources: [DispatchSourceSignal] = []
        for (number, name) in [(SIGTERM, "SIGTERM"), (SIGINT, "SIGINT")] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .main)
            source.setEventHandler { stop(name) }
            source.resume()
            sources.append(source)
        }
        try await emulator.waitUntilClosed()
        _ = sources
    }
}

extension EmulatorCLI {
    /// The --vendor-* flags (the listener every vendor side shares), then each side's own (`EmulatedServices`).
    func configureVendors(_ configuration: inout EmulatorConfiguration) throws {
        configuration.vendorPort = vendorPort
        configuration.vendorMaxConcurrentStreams = vendorMaxStreams
        configuration.vendorOffersHTTP2 = !vendorHTTP1Only
        try services.apply(to: &configuration)
    }
}

/// Unbuffered, so a parent process reading our output sees the line at once.
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
