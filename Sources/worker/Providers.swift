import APNsProvider
import FCMProvider
import HonorProvider
import HuaweiProvider
import OPPOProvider
import ProviderKit
import PushCore
import Pusher
import VivoProvider
import XiaomiProvider

/// The providers this worker is built with (docs/architecture.md, "Providers"), the default one first.
/// Adding a provider is a folder under `Sources/Providers` and a line here: nothing else in the worker names one.
enum Providers {
    static let modules: [any ProviderModule.Type] = [APNsModule.self, FCMModule.self, HuaweiModule.self, XiaomiModule.self, HonorModule.self, OPPOModule.self, VivoModule.self]

    /// Registers every module's name, message rules and configuration keys: before the configuration or any
    /// message is read (the start of `main`).
    static func register() {
        for module in modules { _ = module.provider }
    }

    /// Every provider's apps: each module with its block of `configuration` (an empty block: a module that serves
    /// nothing).
    static func load(_ configuration: WorkerConfiguration) throws -> [any ProviderApps] {
        try modules.map { module in
            try module.init(block: configuration.providerBlocks[module.description.name] ?? ConfigurationBlock(name: module.description.name))
        }
    }

    /// Each provider's known answers and retry reasons at 0, and its apps: `push_notifications_total`'s `app` label is
    /// bounded by their topics, each with its known outcomes at 0 (after the exporter is installed).
    static func registerKnownSeries(_ providers: [any ProviderApps]) {
        for apps in providers {
            let kind = type(of: apps), known = kind.knownSeries
            ServiceMetrics.of(kind.provider).registerKnownSeries(responses: known.responses, retries: known.retries)
        }
        PushMetrics.shared.configureApps(providers.map { (type(of: $0).provider, $0.topics, type(of: $0).knownSeries.outcomes) })
    }

    /// `<provider>.apps` of each provider (the default one's first), for the error that none has an app.
    static func appLists(_ providers: [any ProviderApps]) -> [String] {
        providers.map { "\(type(of: $0).provider.rawValue).apps" }
    }
}
