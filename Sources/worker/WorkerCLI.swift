import ArgumentParser
import Foundation
import Logging
import Observability
import ProviderKit
import PushCore
import Pusher
import ServiceLifecycle
import Synchronization

@main
struct WorkerCLI: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "worker",
        abstract: "Turns messages an IM backend LPUSHes onto a Redis list into pushes to iPhones and Android phones, losing none.",
        version: Build.versionLine,
        subcommands: [Run.self, CheckConfig.self, EnqueueCommand.self, ExplainCommand.self, StatusCommand.self, DLQCommand.self, ParkedCommand.self, HealthCommand.self]
    )

    /// Before anything opens a socket: a reset push-service or Redis connection fails a write, never ends the
    /// worker or a tool (swift-nio, when the metrics listener runs, happens to do the same; nothing may rely on it).
    static func main() async {
        BrokenPipes.ignoreInProcess()
        Providers.register()
        do {
            var command = try parseAsRoot()
            if var asynchronous = command as? AsyncParsableCommand {
                try await asynchronous.run()
            } else {
                try command.run()
            }
        } catch {
            // docs/tools.md: bad usage exits 2 (ArgumentParser's own code for it is 64, EX_USAGE).
            guard exitCode(for: error) == .validationFailure else { exit(withError: error) }
            FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
            Foundation.exit(2)
        }
    }
}

struct Run: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the pipeline: Redis queue -> Collector -> Merger -> Filter -> Pusher -> the push services.",
        discussion: "Every configuration key can be overridden by an environment variable named after it (REDIS_URL, LOG_LEVEL, ...). SIGTERM or SIGINT drains and exits 0; a second signal exits at once."
    )

    @Option(name: .long, help: "YAML configuration file (see config/worker.example.yaml). Without it, defaults and environment variables apply.")
    var config: String?

    func run() async throws {
        let configuration: WorkerConfiguration
        let providers: [any ProviderApps]
        do {
            configuration = try ConfigurationLoader().load(file: config)
            providers = try Providers.load(configuration)
        } catch {
            // Logged as the environment asks (LOG_LEVEL, LOG_FORMAT): the file's log block may be what is wrong.
            let logger = WorkerLogging.bootstrap(ConfigurationLoader().environmentLogSettings())
            logger.critical("cannot start: \(error)")
            throw ExitCode(2)
        }
        let logger = WorkerLogging.bootstrap(configuration.log)
        for warning in FilePermissions.warnings(for: configuration) { logger.warning("\(warning)") }
        let workerID = configuration.workerID.isEmpty ? WorkerIdentity.defaultID() : configuration.workerID
        let readiness = Readiness()
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = []
        // The listener starts first and so stops last: /readyz answers "draining" while the pipeline drains.
        if let address = try? ListenAddress.parse(configuration.metricsListen) {
            let registry = PrometheusExporter.bootstrap(version: BuildInfo.version, commit: Build.commit)
            let routes = HealthRoutes(readiness: readiness) { registry.emitToBuffer() }
            do {
                services.append(.init(service: try await ObservabilityServer.bind(address, routes: routes, logger: logger)))
            } catch {
                logger.critical("cannot start: \(error)")
                throw ExitCode(2)
            }
        }
        // After the exporter is installed: push_notifications_total's `app` label is bounded by these topics.
        Providers.registerKnownSeries(providers)
        // Receipts answer while the pipeline drains, like the health listener: started before it, stopped after it.
        do {
            if let receipts = try await ReceiptsListener.start(configuration, providers: providers, logger: logger) {
                services.append(.init(service: receipts))
            }
        } catch {
            logger.critical("cannot start: \(error)")
            throw ExitCode(2)
        }
        let pipeline: PipelineService
        do {
            pipeline = try PipelineService(configuration: configuration, providers: providers, workerID: workerID, logger: logger,
                                           readiness: readiness)
        } catch {
            logger.critical("cannot start: \(error)")
            throw ExitCode(2)
        }
        services.append(.init(service: pipeline))
        SecondSignal.exitImmediately(logger: logger)
        // SIGHUP reloads the word lists (FilterReloader); it must never end the process, filter or not.
        signal(SIGHUP, SIG_IGN)
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(
            services: services,
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger
        ))
        do {
            try await group.run()
        } catch let error as StartupError {
            logger.critical("cannot start: \(error)")
            throw ExitCode(2)
        }
    }
}

enum WorkerIdentity {
    /// hostname-pid: unique among live workers on one host, readable in `push:processing:<id>`.
    static func defaultID() -> String { "\(ProcessInfo.processInfo.hostName)-\(getpid())" }
}

enum WorkerLogging {
    /// Structured logs to stderr at `log.level` (LOG_LEVEL): one readable line per event, or one JSON object per
    /// line with the same fields (`log.format: json`, LOG_FORMAT=json).
    static func bootstrap(_ settings: LogSettings) -> Logger {
        let level = Logger.Level(rawValue: settings.level) ?? .info
        switch settings.format {
        case .text:
            LoggingSystem.bootstrap { label in
                var handler = StreamLogHandler.standardError(label: label)
                handler.logLevel = level
                return handler
            }
        case .json:
            LoggingSystem.bootstrap { label in JSONLogHandler(label: label, level: level) }
        }
        return Logger(label: "worker")
    }
}

/// The first SIGTERM/SIGINT starts a graceful shutdown (ServiceGroup); a second one exits at once.
/// Nothing is lost either way: what this worker had claimed stays in its processing hash.
enum SecondSignal {
    nonisolated(unsafe) private static var sources: [DispatchSourceSignal] = []
    private static let seen = Atomic<Int>(0)

    static func exitImmediately(logger: Logger) {
        for number in [SIGTERM, SIGINT] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                if seen.add(1, ordering: .relaxed).newValue >= 2 {
                    logger.warning("second signal: exiting now; claimed messages stay in the processing hash")
                    exit(130)
                }
            }
            source.resume()
            sources.append(source)
        }
    }
}
