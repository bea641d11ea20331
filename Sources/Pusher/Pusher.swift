import Foundation
import Logging
import ProviderKit
import PushCore

/// The last stage: sends each job's tokens to its provider's service (the job's `provider`), through the scheduler
/// lanes of its app's credential (apps that share a credential may share lanes: apps that share a signing key share
/// its lanes and its JWT), and reports every token's final outcome to `sink`. One service never waits for another:
/// each has lanes, threads and connections of its own. It names no provider: each one's apps make their lanes.
public final class Pusher: Sendable {
    private let transports: [Scheduler]
    /// Each credential's app label, service and lanes, for the connection gauges.
    private let appLanes: [(app: String, provider: PushProvider, lanes: [Int])]
    /// Topic -> the lanes of its credential, per provider (`PushProvider.index`).
    private let routes: [[String: [Int]]]
    /// What ends the providers' own threads (their token caches), after the lanes.
    private let shutdowns: [@Sendable () async -> Void]
    private let sink: @Sendable ([Resolution]) -> Void
    private let logger: Logger

    /// Loads every app's credentials; a missing or malformed key or certificate is a startup error.
    /// `providers`: each provider's configured apps (the default provider's and the other modules'); each makes its
    /// apps' lanes.
    /// `lease`: whether the worker still owns its claims (ownership fencing); requests wait while it has lapsed.
    /// `waitBoard`: where each lane says whether it waits (isolation); the apps' lanes are registered there.
    public init(providers: [any ProviderApps], retry: RetrySettings, logger: Logger,
                readiness: Readiness? = nil, lease: OwnershipLease = .unfenced(), waitBoard: AppWaitBoard? = nil,
                sink: @escaping @Sendable ([Resolution]) -> Void) throws {
        let cores = ProcessInfo.processInfo.activeProcessorCount
        var transports: [Scheduler] = []
        var appLanes: [(app: String, provider: PushProvider, lanes: [Int])] = []
        var allRoutes: [[String: [Int]]] = []
        var shutdowns: [@Sendable () async -> Void] = []
        var stops: [@Sendable () -> Void] = []
        do {
            let context = LaneContext(logger: logger, readiness: readiness, cores: cores)
            for apps in providers {
                let provider = type(of: apps).provider
                while allRoutes.count <= provider.index { allRoutes.append([:]) }
                for app in try apps.makeLanes(context) {
                    // Stops of this app's own threads first, so that a lane that fails to start ends them too.
                    if let stop = app.stop { stops.append(stop) }
                    if let shutdown = app.shutdown { shutdowns.append(shutdown) }
                    let first = transports.count
                    // What the app's lanes know together of its credential (refused, paused, held).
                    let credential = CredentialState()
                    for plan in app.lanes {
                        var settings = plan.settings
                        settings.retry = retry
                        settings.waitBoard = waitBoard
                        settings.boardLane = transports.count
                        transports.append(try Scheduler(settings: settings, service: plan.service, readiness: readiness, logger: logger,
                                                        credential: credential, lease: lease, sink: sink))
                    }
                    let indices = Array(first..<transports.count)
                    app.started?(indices.map { transports[$0] })
                    appLanes.append((app.app, provider, indices))
                    allRoutes[provider.index][app.app] = indices
                    for topic in app.alsoServes { allRoutes[provider.index][topic] = indices }
                }
            }
        } catch {
            // Nothing started may outlive a failed start: the lanes and token threads made so far end here.
            transports.forEach { $0.abort() }
            stops.forEach { $0() }
            throw error
        }
        if let waitBoard {
            // By the providers given, not the registry's list: a provider registered but not given has no routes.
            for provider in Set(providers.map { type(of: $0).provider }) {
                for (topic, lanes) in allRoutes[provider.index] {
                    waitBoard.register(AppWaitBoard.App(provider: provider, topic: topic), lanes: lanes)
                }
            }
        }
        self.transports = transports
        self.appLanes = appLanes
        self.routes = allRoutes
        self.shutdowns = shutdowns
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
            var lastProvider: PushProvider?
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
        for shutdown in shutdowns { await shutdown() }
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
