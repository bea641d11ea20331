import Collector
import Filter
import Foundation
import Logging
import Merger
import ProviderKit
import PushCore
import Pusher
import QueueProtocol
import RedisClient
import ServiceLifecycle

struct StartupError: Error, CustomStringConvertible {
    let description: String
}

/// The whole pipeline as one Service: Collector -> Merger -> Filter -> Pusher, with results flowing
/// back to the Acknowledger. Graceful shutdown stops claiming, lets in-flight work finish within
/// `shutdown.timeout_s`, acknowledges it, and returns whatever is left to the queue.
struct PipelineService: Service, CustomStringConvertible {
    let configuration: WorkerConfiguration
    /// Every provider's apps, read from the configuration (`Providers`).
    let providers: [any ProviderApps]
    let workerID: String
    let logger: Logger
    let filter: LiveFilter
    let readiness: Readiness

    /// What ServiceLifecycle prints for this service at debug and trace level: never the configuration,
    /// whose secrets would otherwise be printed by Swift's default description of a struct.
    var description: String { "PipelineService(worker: \(workerID))" }

    init(configuration: WorkerConfiguration, providers: [any ProviderApps], workerID: String, logger: Logger,
         readiness: Readiness = Readiness()) throws {
        self.configuration = configuration
        self.providers = providers
        self.readiness = readiness
        self.workerID = workerID
        self.logger = logger
        self.filter = try LiveFilter(settings: configuration.filter)
        // Any one provider, or several: a worker with no app at all has nothing to send to.
        if providers.allSatisfy(\.topics.isEmpty) {
            throw StartupError(description: "no app is configured (\(Providers.appLists(providers).joined(separator: ", ")) are all empty): configure at least one app (docs/configuration.md)")
        }
    }

    func run() async throws {
        // Isolation: which apps cannot send now, and the work their lanes hold (docs/architecture.md).
        let waitBoard = AppWaitBoard()
        let gate = CapacityGate(limit: configuration.collector.maxInFlight, byteLimit: configuration.collector.maxInFlightBytes,
                                board: waitBoard)
        // Ownership fencing: nothing claimed is sent unless a heartbeat of its shard was confirmed recently.
        let lease = OwnershipLease(shards: configuration.redis.prefixes.count)
        // One cluster topology for every connection of every shard: what one connection learns (a MOVED, a
        // dead node, a promoted replica) serves all, the ones that never met a redirection included.
        let clusterMap = RedisConnector.clusterMap(configuration.redis, name: "topology")
        let shards = configuration.redis.prefixes.enumerated().map { index, prefix in
            ShardPipeline(index: index, prefix: prefix, configuration: configuration, workerID: workerID, gate: gate, logger: logger,
                          readiness: readiness, lease: lease, clusterMap: clusterMap, waitBoard: waitBoard)
        }
        for shard in shards {
            guard try await prepare(shard.recoveryQueue, shard.heartbeat) else {
                await shards.asyncForEach { await $0.close() }
                        return
            }
        }
        // Each app's last delivery, shared with the fleet through the first shard (the refusal rule's "quiet" is the
        // fleet's), read once before the lanes start.
        let fleetDeliveries = shards.first.map {
            FleetDeliverySync(connection: $0.unparker.queue.connection, keys: $0.keys, logger: logger)
        }
        try? await fleetDeliveries?.pass()
        let router = ResultRouter(inputs: shards.map(\.acknowledger.input))
        let pusher: Pusher
        do {
            pusher = try Pusher(providers: providers, retry: configuration.retry,
                                logger: logger, readiness: readiness,
                                lease: lease, waitBoard: waitBoard) { resolutions in
                router.route(.resolved(resolutions))
            }
        } catch {
            throw StartupError(description: "\(error)")
        }
        // The apps' rate budgets across the fleet, in the first shard's slot, on a connection of their own (a
        // lane short of permits waits for this one's calls, never behind another loop's): the lanes' shares (made
        // above, with the lanes) reach Redis before the first send.
        let rateConnection = shards.first.map {
            RedisConnector.connection(configuration.redis, shard: $0.keys.prefix, name: "rate", map: clusterMap)
        }
        var fleetRates: FleetRateRefiller?
        if let shard = shards.first, let rateConnection {
            fleetRates = FleetRateRefiller(connection: rateConnection, keys: shard.keys, logger: logger)
        }
        await fleetRates?.prepare()
        let sampler = MetricsSampler(gate: gate, pusher: pusher, queues: shards.map(\.metricsQueue),
                                     maxElementBytes: configuration.collector.maxElementBytes)
        let reloader = FilterReloader(filter: filter, intervalMillis: configuration.filter.reloadIntervalMillis, logger: logger)
        readiness.clear(.starting)

        logger.info("worker started", metadata: [
            "worker": "\(workerID)", "queue": "\(shards.map(\.keys.queue).joined(separator: ","))",
            "apps": "\(providers.map { "\(type(of: $0).provider.rawValue) \($0.topics.count)" }.joined(separator: ", "))",
            "filter_words": "\(filter.current.matcher.entries.count)",
        ])
        for warning in providers.flatMap(\.warnings) { logger.warning("configuration: \(warning)") }
        let deadline = configuration.shutdown.timeoutSeconds
        // The loops that run beside the pipeline (heartbeats, the metrics sampler, the filter reloader, the
        // shutdown deadline) are children of this task: none outlives the service, all end when it does.
        await withTaskGroup(of: Void.self) { background in
            for shard in shards { background.addTask { await shard.heartbeat.run() } }
            for shard in shards { background.addTask { await shard.unparker.run() } }
            if let fleetDeliveries { background.addTask { await fleetDeliveries.run() } }
            if let fleetRates { background.addTask { await fleetRates.run() } }
            background.addTask {
                // Work that starts or stops waiting changes the room claims have.
                for await _ in waitBoard.changes { await gate.waitingChanged() }
            }
            background.addTask { await sampler.run() }
            background.addTask { await reloader.run() }
            background.addTask {
                // From the first signal, in-flight work has `deadline` seconds; then it is given up (its
                // messages stay claimed and go back to the queue below).
                guard (try? await gracefulShutdown()) != nil else { return }
                await gate.open()  // the collectors, waiting for room, see that they must stop
                guard (try? await Task.sleep(for: .seconds(deadline))) != nil else { return }
                if pusher.outstanding > 0 {
                    logger.warning("shutdown deadline passed; unfinished messages go back to the queue",
                                   metadata: ["tokens": "\(pusher.outstanding)"])
                }
                pusher.abort()
                shards.forEach { $0.acknowledger.abandon() }
                // From now on a Redis call of the stages gets a moment, not a socket timeout: a healthy Redis
                // answers within it (acknowledgements still written), a silent one cannot hold the exit.
                while !Task.isCancelled {
                    shards.forEach { $0.interruptStages() }
                    guard (try? await Task.sleep(for: Self.callBudgetAfterDeadline)) != nil else { return }
                }
            }
            await withGracefulShutdownHandler {
                await runStages(shards: shards, router: router, pusher: pusher, filterStage: FilterStage(filter: filter))
            } onGracefulShutdown: {
                readiness.set(.draining)
                logger.info("shutting down: no more claims; finishing in-flight work", metadata: ["deadline_s": "\(deadline)"])
                shards.forEach { $0.collector.stop() }
            }
            background.cancelAll()
            // A beat or recovery blocked on a silent Redis ends now rather than at its socket timeout.
            shards.forEach { $0.interruptBackground() }
            rateConnection?.interrupt()
        }
        let snapshot = shards.map(\.counts.snapshot).reduce(OutcomeCounts(), +)
        let returned = await finishAll(shards)
        logger.info("worker stopped", metadata: [
            "delivered": "\(snapshot.delivered)", "feedback": "\(snapshot.feedback)",
            "dead_lettered": "\(snapshot.deadLettered)", "filtered_messages": "\(snapshot.filteredMessages)",
            "acknowledged_messages": "\(snapshot.acknowledgedMessages)", "returned_to_queue": "\(returned)",
        ])
        await shards.asyncForEach { await $0.close() }
        await rateConnection?.close()
    }

    /// Collector -> Merger -> Filter -> Pusher, results back to the Acknowledgers; returns when every stage has
    /// ended (the collectors stopped claiming and everything in flight has its outcome or was given up).
    private func runStages(shards: [ShardPipeline], router: ResultRouter, pusher: Pusher, filterStage: FilterStage) async {
        let (batches, batchInput) = AsyncStream.makeStream(of: MessageBatch.self)
        let (merged, mergedInput) = AsyncStream.makeStream(of: [PushJob].self)
        let (clean, cleanInput) = AsyncStream.makeStream(of: [PushJob].self)
        await withTaskGroup(of: Void.self) { group in
            for shard in shards { group.addTask { await shard.acknowledger.run() } }
            group.addTask {
                // Every shard's collector feeds the one Merger; its input ends when all of them have stopped.
                await withTaskGroup(of: Void.self) { collectors in
                    for shard in shards {
                        collectors.addTask {
                            let (own, ownInput) = AsyncStream.makeStream(of: MessageBatch.self)
                            async let claiming: Void = shard.collector.run(output: ownInput)
                            for await batch in own { batchInput.yield(batch) }
                            await claiming
                        }
                    }
                }
                batchInput.finish()
            }
            group.addTask { await Merger().run(input: batches, output: mergedInput) }
            group.addTask {
                await filterStage.run(input: merged, output: cleanInput) { router.route($0) }
            }
            group.addTask {
                await pusher.run(input: clean)
                // Every source of results has ended: the Acknowledgers write what remains and return.
                router.finish()
            }
            await group.waitForAll()
        }
    }

    /// Waits for Redis (retrying, never fatal), refuses an id a live worker holds, and returns claims
    /// this id left behind in an earlier life (containers reuse hostname-pid). False if shut down meanwhile.
    private func prepare(_ queue: WorkQueue, _ heartbeat: Heartbeat) async throws -> Bool {
        var backoff = Backoff.redisReconnect(baseMillis: 200, maxMillis: 5000)
        while true {
            if Task.isCancelled || Task.isShuttingDownGracefully { return false }
            do {
                if try await queue.isAlive(workerID) {
                    throw StartupError(description: "worker id '\(workerID)' belongs to a live worker (\(queue.keys.heartbeat(worker: workerID)) exists); give each worker its own worker.id")
                }
                // Claims in the list form of earlier versions, whose owners are gone (migration). Sharded
                // key sets are new, so they have none (and a keyspace SCAN would see one cluster node only).
                for owner in configuration.redis.shards.isEmpty ? try await queue.legacyProcessingOwners() : [] {
                    heartbeat.report(try await queue.recover(worker: owner, onlyIfDead: true, countDeath: false), of: owner)
                }
                // This id's earlier life ended without returning its claims: it died holding them.
                let leftovers = try await queue.recover(worker: workerID, onlyIfDead: false, countDeath: true)
                if leftovers.returned > 0 {
                    logger.warning("returned claims left by an earlier run of this worker id", metadata: ["messages": "\(leftovers.returned)"])
                }
                var poisonedOnly = leftovers
                poisonedOnly.returned = 0
                heartbeat.report(poisonedOnly, of: workerID)
                try await heartbeat.beatOnce()
                readiness.clear(heartbeat.unreachable)
                return true
            } catch let error as StartupError {
                throw error
            } catch {
                readiness.set(heartbeat.unreachable)
                logger.error("Redis unreachable; retrying", metadata: ["error": "\(error)", "redis": "\(configuration.redis.shownAddress)"])
                try? await Task.sleep(for: .milliseconds(backoff.next()))
            }
        }
    }

    /// Returns what every shard still claims to its queue and removes the heartbeats, all shards at once and
    /// within `finishBudget` in all, whatever Redis does: at the end of the budget a call still waiting on a
    /// silent Redis is interrupted. Claims not returned stay in the processing hash, and a live worker returns
    /// them once the heartbeat expires. How many claims were returned.
    private func finishAll(_ shards: [ShardPipeline]) async -> Int {
        // Redis already proved silent after the deadline: one call's moment, in case it is back.
        let silent = shards.contains { $0.acknowledger.gaveUpOnRedis }
        let giveUp = ContinuousClock.now + (silent ? Self.callBudgetAfterDeadline : Self.finishBudget)
        return await withTaskGroup(of: Int?.self) { group in
            for shard in shards { group.addTask { await finish(shard.claimQueue, giveUp: giveUp) } }
            group.addTask {
                guard (try? await Task.sleep(until: giveUp)) != nil else { return nil }
                shards.forEach { $0.claimQueue.connection.interrupt() }
                return nil
            }
            var returned = 0
            var finished = 0
            for await result in group {
                guard let result else { continue }
                returned += result
                finished += 1
                if finished == shards.count { group.cancelAll() }
            }
            return returned
        }
    }

    private func finish(_ queue: WorkQueue, giveUp: ContinuousClock.Instant) async -> Int {
        var backoff = Backoff.redisReconnect(baseMillis: 100, maxMillis: 1000)
        while ContinuousClock.now < giveUp {
            do {
                let returned = try await queue.returnOwnClaims()
                try await queue.clearHeartbeat()
                return returned
            } catch {
                logger.error("cannot return claims yet", metadata: ["error": "\(error)"])
                try? await Task.sleep(until: min(giveUp, ContinuousClock.now + .milliseconds(backoff.next())))
            }
        }
        logger.error("Redis unreachable at exit: claims stay in the processing hash for recovery by a live worker",
                     metadata: ["queue": "\(queue.keys.queue)"])
        return 0
    }

    /// How long the exit tries to return claims to an unreachable Redis, after the stages have ended: with
    /// the moments the stages take to end after the deadline, SIGTERM exits within `shutdown.timeout_s` + 2 s.
    static let finishBudget = Duration.seconds(1)
    /// After the shutdown deadline, how long a Redis call of the stages may wait before it is interrupted.
    static let callBudgetAfterDeadline = Duration.milliseconds(250)
}

extension Array where Element: Sendable {
    func asyncForEach(_ body: (Element) async -> Void) async {
        for element in self { await body(element) }
    }
}
