import Foundation
import Logging
import PushCore

/// The last stage: sends each job's tokens to its service, APNs or a provider module's (the job's `provider`), through
/// the scheduler lanes of its app's credential (apps that share a .p8 key share its lanes and its JWT; a module's
/// apps that share a credential may share lanes too), and reports every token's final outcome to `sink`. One
/// service never waits for another: each has lanes, threads and connections of its own.
public final class Pusher: Sendable {
    private let transports: [Scheduler]
    /// Each credential's app label, service and lanes, for the connection gauges.
    private let appLanes: [(app: String, provider: PushProvider, lanes: [Int])]
    /// Topic -> the lanes of its credential, per provider (`PushProvider.index`: APNs, then the modules).
    private let routes: [[String: [Int]]]
    /// What ends the provider modules' own threads (their token caches), after the lanes.
    private let moduleShutdowns: [@Sendable () async -> Void]
    private let sink: @Sendable ([Resolution]) -> Void
    private let logger: Logger

    /// Loads every app's credentials; a missing or malformed key or certificate is a startup error.
    /// `lease`: whether the worker still owns its claims (ownership fencing); requests wait while it has lapsed.
    /// `waitBoard`: where each lane says whether it waits (isolation); the apps' lanes are registered there.
    /// `modules`: the provider modules read from the configuration; each makes its apps' lanes.
    public init(settings: APNsSettings, modules: [any ProviderModule] = [],
                retry: RetrySettings, logger: Logger,
                readiness: Readiness? = nil, lease: OwnershipLease = .unfenced(), waitBoard: AppWaitBoard? = nil,
                sink: @escaping @Sendable ([Resolution]) -> Void) throws {
        // Each credential gets lanes, each a thread with its own HTTP/2 client and its share of the connections.
        // By default, with our own sessions, one per two cores: the transport takes about 60% of a worker's
        // CPU and the stages the rest, and on two cores one lane did 10% more notifications/s than two, at less
        // CPU each (each lane's thread then fills its TLS writes with more requests). libcurl costs several
        // times more per request, so one of its lanes is CPU-bound sooner: one per core (docs/performance.md).
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let perCore = TransportKind(rawValue: settings.transport) == .libcurl ? cores : cores / 2
        let lanes = settings.transportThreads > 0
            ? settings.transportThreads
            : max(1, min(settings.connections, perCore))
        var transports: [Scheduler] = []
        var byCredential: [AppCredential: [Int]] = [:]
        var routes: [String: [Int]] = [:]
        var appLanes: [(app: String, provider: PushProvider, lanes: [Int])] = []
        for app in settings.apps {
            if let existing = byCredential[app.credential] {
                routes[app.topic] = existing
                continue
            }
            var transport = TransportSettings(baseURL: settings.endpoint.baseURL)
            transport.caFile = settings.caFile
            transport.initialConnections = max(1, (settings.connections + lanes - 1) / lanes)
            transport.connections = max(transport.initialConnections, (max(settings.maxConnections, settings.connections) + lanes - 1) / lanes)
            transport.requestTimeoutMillis = settings.requestTimeoutMillis
            transport.credentialProbeLongestMillis = settings.credentialProbeMaxMillis
            transport.credentialProbeFirstMillis = min(1000, settings.credentialProbeMaxMillis)
            transport.retry = retry
            transport.app = app.topic
            transport.socketAction = settings.eventLoop == "epoll"
            transport.driver = TransportKind(rawValue: settings.transport) ?? .nghttp2
            transport.pingIntervalMillis = settings.pingIntervalMillis
            transport.waitBoard = waitBoard
            var provider: ProviderToken?
            switch app.credential {
            case .token(let teamID, let keyID, let keyFile):
                let signer = try JWTSigner(keyFile: keyFile, keyID: keyID, teamID: teamID)
                provider = ProviderToken(signer: signer, app: app.topic)
                _ = try provider?.current()  // fail at startup, not on the first message
            case .certificate(let file, let password):
                try ClientCertificate.validate(file: file, password: password.value)
                transport.certificateFile = file
                transport.certificatePassword = password
            }
            let indices = Array(transports.count..<transports.count + lanes)
            let credentialState = CredentialState()
            for lane in 0..<lanes {
                transport.lane = lane
                transport.boardLane = transports.count
                transports.append(try Scheduler(settings: transport, provider: provider, readiness: readiness, logger: logger,
                                                    credential: credentialState, lease: lease, sink: sink))
            }
            appLanes.append((app.topic, .apns, indices))
            byCredential[app.credential] = indices
            routes[app.topic] = indices
        }
        var allRoutes = [routes]
        var moduleShutdowns: [@Sendable () async -> Void] = []
        var moduleStops: [@Sendable () -> Void] = []
        do {
            var context = LaneContext(retry: retry, logger: logger, readiness: readiness, lease: lease, waitBoard: waitBoard,
                                      sink: sink, cores: cores)
            for module in modules {
                context.firstBoardLane = transports.count
                let provider = type(of: module).provider
                while allRoutes.count <= provider.index { allRoutes.append([:]) }
                for app in try module.makeLanes(context) {
                    let indices = Array(transports.count..<transports.count + app.lanes.count)
                    transports += app.lanes
                    appLanes.append((app.app, provider, indices))
                    allRoutes[provider.index][app.app] = indices
                    for topic in app.alsoServes { allRoutes[provider.index][topic] = indices }
                    if let shutdown = app.shutdown { moduleShutdowns.append(shutdown) }
                    if let stop = app.stop { moduleStops.append(stop) }
                }
            }
        } catch {
            // Nothing started may outlive a failed start: the lanes and token threads made so far end here.
            transports.forEach { $0.abort() }
            moduleStops.forEach { $0() }
            throw error
        }
        if let waitBoard {
            for (index, routes) in allRoutes.enumerated() {
                let provider = PushProvider.allCases[index]
                for (topic, lanes) in routes { waitBoard.register(AppWaitBoard.App(provider: provider, topic: topic), lanes: lanes) }
            }
        }
        self.transports = transports
        self.appLanes = appLanes
        self.routes = allRoutes
        self.moduleShutdowns = moduleShutdowns
        self.sink = sink
        self.logger = logger
    }

    /// Tokens sent or waiting for a retry, not yet final.
    public var outstanding: Int { transports.reduce(0) { $0 + $1.outstanding.load(ordering: .relaxed) } }

    /// Open connections per app (the first topic of each credential) and service.
    public var openConnections: [(app: String, provider: PushProvider, connections: Int)] {
        appLanes.map { entry in (entry.app, entry.provider, entry.lanes.reduce(0) { $0 + transports[$1].openConnections }) }
    }

    /// Sends jobs until the input ends, then waits until every token has its outcome.
    public func run(input: AsyncStream<[PushJob]>) async {
        for await jobs in input {
            // Where each job goes, decided first, so that a batch bound for one lane (the usual case: one app,
            // one lane) is handed over as it came, without copying every job into a new array.
            var chosen = [Int](repeating: -1, count: jobs.count)
            var assigned = [Int](repeating: 0, count: transports.count)
            var unroutable: [Resolution] = []
            var lastTopic: String?
            var lastProvider = PushProvider.apns
            var lastLanes: [Int]?
            for (position, job) in jobs.enumerated() {
                // Consecutive jobs mostly share their topic (interned: the comparison is a pointer check).
                if lastTopic != job.headers.appTopic || lastProvider != job.headers.provider {
                    lastTopic = job.headers.appTopic
                    lastProvider = job.headers.provider
                    let index = job.headers.provider.index
                    lastLanes = index < routes.count ? routes[index][job.headers.appTopic] : nil
                }
                guard let lanes = lastLanes else {
                    let list = "\(job.headers.provider.rawValue).apps"
                    logger.error("no app configured for topic; dead-lettering", metadata: [
                        "topic": "\(job.headers.appTopic)", "provider": "\(job.headers.provider.rawValue)",
                        "message_id": "\(Self.names(job.sourceIDs))",
                    ])
                    let outcome = TokenOutcome.failed(reason: "TopicNotConfigured: no app in \(list) has topic \(job.headers.appTopic)",
                                                      status: nil, attempts: 0)
                    for index in job.tokens.indices {
                        for seq in job.owners(ofToken: index) {
                            unroutable.append(Resolution(seq: seq, token: job.tokens[index], outcome: outcome))
                        }
                    }
                    continue
                }
                // The least loaded lane of the credential takes the job.
                let lane = lanes.count == 1 ? lanes[0] : lanes.min {
                    transports[$0].outstanding.load(ordering: .relaxed) + assigned[$0]
                        < transports[$1].outstanding.load(ordering: .relaxed) + assigned[$1]
                }!
                chosen[position] = lane
                assigned[lane] += 1
            }
            if !unroutable.isEmpty { sink(unroutable) }
            if !jobs.isEmpty, let only = assigned.firstIndex(of: jobs.count) {
                transports[only].submit(jobs)
                continue
            }
            for (index, count) in assigned.enumerated() where count > 0 {
                var batch: [PushJob] = []
                batch.reserveCapacity(count)
                for (position, job) in jobs.enumerated() where chosen[position] == index { batch.append(job) }
                transports[index].submit(batch)
            }
        }
        for transport in transports { await transport.finish() }
        for shutdown in moduleShutdowns { await shutdown() }
    }

    /// The ids of a job's messages for a log line: all of them for a small job, the first ten and a count otherwise.
    static func names(_ ids: [String]) -> String {
        ids.count <= 10 ? ids.joined(separator: ",") : ids.prefix(10).joined(separator: ",") + ",… (\(ids.count) messages)"
    }

    /// Gives up on everything in flight: used when the shutdown deadline has passed.
    public func abort() {
        transports.forEach { $0.abort() }
    }
}
