import APNsProvider
@testable import FCMProvider
import Foundation
import HuaweiProvider
import PushCore
import TestSupport
import XCTest
import XiaomiProvider
import Yams

/// The deployment files cannot be run here (no Docker, no cluster), so what they promise is checked
/// against the worker itself: their configuration loads, and every stop deadline is longer than the drain.
final class DeploymentFilesTests: XCTestCase {
    /// Each provider's block is its module's: registered, as the worker registers them, before a configuration is read
    /// (the compose configuration has every provider's: without its module, a block is an unknown key).
    override class func setUp() {
        super.setUp()
        _ = APNsModule.provider
        _ = PushProvider.fcm
        _ = HuaweiModule.provider
        _ = XiaomiModule.provider
    }

    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    private func text(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    private let loader = ConfigurationLoader(environment: [:])
    /// What the exit takes after the drain deadline to return claims (PipelineService.finishBudget) and some slack.
    private let exitSlackSeconds = 10

    func testComposeConfigurationLoadsAndStopsAfterTheDrain() throws {
        let configuration = try loader.load(yaml: try text("deploy/compose-worker.yaml"), origin: "compose-worker.yaml")
        XCTAssertEqual(try ListenAddress.parse(configuration.metricsListen)?.host, "0.0.0.0", "other containers scrape it")
        for provider in ["apns", "fcm", "huawei", "xiaomi"] {
            XCTAssertEqual(configuration.providerBlocks[provider]?.appTopics, ["com.example.chat"], "the compose stack has an app of \(provider)")
        }
        let compose = try XCTUnwrap(try Yams.load(yaml: try text("deploy/docker-compose.yml")) as? [String: Any])
        let anchor = try XCTUnwrap(compose["x-worker"] as? [String: Any])
        let grace = try XCTUnwrap((anchor["stop_grace_period"] as? String)?.dropLast()).flatMap { Int($0) }
        XCTAssertGreaterThanOrEqual(try XCTUnwrap(grace), configuration.shutdown.timeoutSeconds + exitSlackSeconds)
        let services = try XCTUnwrap(compose["services"] as? [String: Any])
        XCTAssertEqual(Set(services.keys), ["redis", "setup", "push-emulator", "worker-1", "worker-2"])
        let redis = try XCTUnwrap(services["redis"] as? [String: Any])
        XCTAssertTrue((redis["command"] as? [String] ?? []).contains("--appendonly"), "Redis with AOF")
    }

    /// The image's HEALTHCHECK and the compose probe run `worker health` (exercised against a running worker by
    /// MetricsEndpointTests.testHealthCommandAsksTheRunningWorker) with the configuration the worker runs with, and
    /// the image's own configuration listens where Docker can ask. No METRICS_LISTEN in the image: it would win
    /// over metrics.listen in a mounted configuration.
    func testImageAndComposeProbeWithTheWorkersOwnHealthCommand() throws {
        let dockerfile = try text("Dockerfile")
        let healthcheck = try XCTUnwrap(dockerfile.split(separator: "\n").first { $0.hasPrefix("HEALTHCHECK") })
        XCTAssertTrue(healthcheck.hasSuffix(#"CMD ["/usr/local/bin/worker", "health", "--config", "/etc/push/worker.yaml"]"#), String(healthcheck))
        XCTAssertTrue(dockerfile.contains(#"CMD ["run", "--config", "/etc/push/worker.yaml"]"#), "the worker runs with the file the HEALTHCHECK reads")
        XCTAssertTrue(dockerfile.contains("COPY deploy/image-worker.yaml /etc/push/worker.yaml"), "the image ships that file")
        XCTAssertFalse(dockerfile.contains("ENV METRICS_LISTEN"), "a mounted configuration's metrics.listen decides")
        let imageConfiguration = try loader.load(yaml: try text("deploy/image-worker.yaml"), origin: "image-worker.yaml")
        XCTAssertEqual(try ListenAddress.parse(imageConfiguration.metricsListen)?.host, "0.0.0.0", "metrics and health reachable from outside the container")
        let compose = try XCTUnwrap(try Yams.load(yaml: try text("deploy/docker-compose.yml")) as? [String: Any])
        let anchor = try XCTUnwrap(compose["x-worker"] as? [String: Any])
        let test = try XCTUnwrap((anchor["healthcheck"] as? [String: Any])?["test"] as? [String])
        XCTAssertEqual(Array(test.prefix(4)), ["CMD", "/usr/local/bin/worker", "health", "--ready"])
    }

    /// Issue 35: the compose stack restarts what dies, and nothing is fetched from the network at `up` (the setup
    /// step makes the demo key with the image's own openssl; no image runs apt-get or pip).
    func testComposeRestartsServicesAndFetchesNothingAtUp() throws {
        let compose = try XCTUnwrap(try Yams.load(yaml: try text("deploy/docker-compose.yml")) as? [String: Any])
        let services = try XCTUnwrap(compose["services"] as? [String: Any])
        for name in ["redis", "push-emulator", "worker-1", "worker-2"] {
            let service = try XCTUnwrap(services[name] as? [String: Any], name)
            let anchor = compose["x-worker"] as? [String: Any] ?? [:]
            let restart = service["restart"] as? String ?? (name.hasPrefix("worker") ? anchor["restart"] as? String : nil)
            XCTAssertEqual(restart, "unless-stopped", "\(name) restarts when it dies")
        }
        let text = try text("deploy/docker-compose.yml")
        for fetch in ["apt-get", "apt ", "pip ", "curl ", "wget "] {
            XCTAssertFalse(text.split(separator: "\n").contains { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("#") && $0.contains(fetch) },
                           "compose fetches nothing at up (\(fetch))")
        }
        XCTAssertTrue(try self.text("Dockerfile").contains(" openssl "), "the image has the openssl the setup step uses")
    }

    /// scripts/check-deploy.py renders the base, each overlay, each component on each Redis overlay and the
    /// ServiceMonitor with `kubectl kustomize`, validates every object against the Kubernetes schemas and checks
    /// Secret access (fsGroup and mode) and use, the providers, the probes, the named metrics port, the Service,
    /// the NetworkPolicies, the systemd instances' ports and the image; then each overlay's configuration, with
    /// the variables its pod gets, must load with the worker's own loader, say where Redis is as the overlay
    /// means, and have apps for the overlay's providers only.
    func testKubernetesOverlaysRenderValidateAndLoad() throws {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("check-deploy-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: out) }
        let (status, output) = try run(["python3", root.appendingPathComponent("scripts/check-deploy.py").path, "--out", out.path])
        XCTAssertEqual(status, 0, "scripts/check-deploy.py failed:\n\(output)")
        guard status == 0 else { return }

        for overlay in ["redis", "sentinel", "cluster", "apns-only", "fcm-only"] {
            let rendered = try String(contentsOf: out.appendingPathComponent("\(overlay).yaml"), encoding: .utf8)
            let objects = try Yams.load_all(yaml: rendered).map { $0 as? [String: Any] ?? [:] }
            let configMaps = objects.filter { $0["kind"] as? String == "ConfigMap" }
            func data(_ prefix: String) throws -> [String: String] {
                let map = try XCTUnwrap(configMaps.first { (($0["metadata"] as? [String: Any])?["name"] as? String)?.hasPrefix(prefix) == true },
                                        "\(overlay): no ConfigMap \(prefix)")
                return try XCTUnwrap(map["data"] as? [String: String])
            }
            let deployment = try XCTUnwrap(objects.first { $0["kind"] as? String == "Deployment" })
            let pod = try XCTUnwrap(((deployment["spec"] as? [String: Any])?["template"] as? [String: Any])?["spec"] as? [String: Any])
            let container = try XCTUnwrap((pod["containers"] as? [[String: Any]])?.first)
            var environment = try data("push-worker-redis")
            for variable in container["env"] as? [[String: Any]] ?? [] {
                if let name = variable["name"] as? String, let value = variable["value"] as? String { environment[name] = value }
            }
            let configuration = try ConfigurationLoader(environment: environment)
                .load(yaml: try XCTUnwrap(try data("push-worker-config")["worker.yaml"]), origin: "\(overlay) worker.yaml")
            let listen = try XCTUnwrap(try ListenAddress.parse(configuration.metricsListen))
            XCTAssertEqual(listen.host, "0.0.0.0", overlay)
            XCTAssertEqual(listen.port, 9464, overlay)
            XCTAssertEqual(configuration.log.format, .json, overlay)
            XCTAssertGreaterThanOrEqual(try XCTUnwrap(pod["terminationGracePeriodSeconds"] as? Int),
                                        configuration.shutdown.timeoutSeconds + exitSlackSeconds, overlay)
            XCTAssertEqual(configuration.appTopics(of: .apns).isEmpty, overlay == "fcm-only", "\(overlay): APNs apps")
            XCTAssertEqual(try configuration.fcmSettings().apps.isEmpty, overlay == "apns-only", "\(overlay): FCM apps")
            switch overlay {
            case "sentinel":
                XCTAssertEqual(configuration.redis.sentinel.master, "mymaster")
                XCTAssertEqual(configuration.redis.sentinel.nodes.count, 3)
            case "cluster":
                XCTAssertEqual(configuration.redis.seeds.count, 3)
                XCTAssertEqual(configuration.redis.shards.count, 8)
                XCTAssertFalse(configuration.redis.sentinel.isEnabled)
            default:
                XCTAssertEqual(configuration.redis.seeds.count, 1)
                XCTAssertFalse(configuration.redis.sentinel.isEnabled)
            }
        }
    }

    /// Runs a command from the repository root; its exit status and what it printed (both streams).
    private func run(_ arguments: [String]) throws -> (Int32, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        process.currentDirectoryURL = root
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self))
    }

    func testSystemdUnitStopsAfterTheDrainAndDoesNotRestartConfigurationErrors() throws {
        let unit = try text("deploy/systemd/push-worker@.service")
        let timeout = unit.split(separator: "\n").first { $0.hasPrefix("TimeoutStopSec=") }.flatMap { Int($0.dropFirst("TimeoutStopSec=".count)) }
        XCTAssertGreaterThanOrEqual(try XCTUnwrap(timeout), WorkerConfiguration().shutdown.timeoutSeconds + exitSlackSeconds)
        XCTAssertTrue(unit.contains("RestartPreventExitStatus=2"))
    }

    /// scripts/check-deploy-systemd.sh: deploy/systemd/install.sh, staged into a temporary DESTDIR with the built
    /// worker, installs the binary ExecStart runs, the user the unit runs as, the configuration, instance 1's
    /// environment file and the documents Documentation= names; `systemd-analyze verify` says nothing.
    func testSystemdInstallScriptInstallsWhatTheUnitNames() throws {
        let (status, output) = try run([root.appendingPathComponent("scripts/check-deploy-systemd.sh").path, WorkerProcess.binaryPath])
        XCTAssertEqual(status, 0, "scripts/check-deploy-systemd.sh failed:\n\(output)")
    }

    /// docs/metrics.md's metric table, copied by hand: every row must be queried by some panel.
    static let specMetrics = [
        "push_messages_claimed_total", "push_messages_acknowledged_total", "push_messages_merged_total",
        "push_notifications_total", "push_provider_responses_total", "push_provider_retries_total",
        "push_provider_request_duration_seconds", "push_queue_to_provider_seconds", "push_in_flight_notifications",
        "push_provider_connections", "push_provider_streams_limit", "push_provider_token_renewals_total",
        "push_redis_reconnects_total", "push_provider_access_token_renewals_total",
        "push_queue_length", "push_build_info", "push_parked",
    ]
    /// What the worker exports beyond the table (Sources/PushCore/Metrics/PushMetrics.swift, ServiceMetrics.swift).
    static let workerExtras = [
        "push_provider_app_paused", "push_claims_lost_total", "push_provider_connections_opened_total",
        "push_redis_wait_shortfalls_total", "push_filter_reloads_total", "push_filter_words",
        "push_provider_requests_in_flight", "push_messages_parked_total",
    ]

    /// Every panel's queries, with the panel's title.
    private func dashboardQueries() throws -> [(title: String, expr: String)] {
        let dashboard = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(try text("deploy/grafana/push-pipeline.json").utf8)) as? [String: Any])
        let panels = try XCTUnwrap(dashboard["panels"] as? [[String: Any]])
        return panels.flatMap { panel in
            (panel["targets"] as? [[String: Any]] ?? []).compactMap { target in
                (target["expr"] as? String).map { (panel["title"] as? String ?? "", $0) }
            }
        }
    }

    func testGrafanaDashboardShowsEveryMetricOfTheSpec() throws {
        let queries = try dashboardQueries()
        let used = Set(queries.flatMap { $0.expr.matches(of: /push_[a-z_]+/).map { String($0.output) } })
            .map { $0.hasSuffix("_bucket") ? String($0.dropLast("_bucket".count)) : $0 }
        for metric in Self.specMetrics + Self.workerExtras {
            XCTAssertTrue(used.contains(metric), "no panel queries \(metric)")
        }
        XCTAssertEqual(Set(used).subtracting(Self.specMetrics + Self.workerExtras), [], "the dashboard names a metric neither docs/metrics.md nor the worker has")
        XCTAssertTrue(queries.contains { $0.expr.contains("push_notifications_total") && $0.expr.contains("by (provider") },
                      "outcomes split by provider")
        // Readiness per worker from a real readiness series: the pod's Ready condition, which /readyz decides.
        let readiness = queries.filter { $0.title == "Readiness per worker" }.map(\.expr)
        XCTAssertTrue(readiness.contains { $0.contains("kube_pod_status_ready") }, "\(readiness)")
    }
}
