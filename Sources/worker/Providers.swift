import FCMProvider
import HuaweiProvider
import PushCore
import Pusher
import XiaomiProvider

/// The provider modules this worker is built with, beside APNs (docs/architecture.md, "Providers"). Adding a
/// provider is a folder under `Sources/Providers` and a line here: nothing else in the worker names one.
enum Providers {
    static let modules: [any ProviderModule.Type] = [FCMModule.self, HuaweiModule.self, XiaomiModule.self]

    /// Registers every module's name, message rules and configuration keys: before the configuration or any
    /// message is read (the start of `main`).
    static func register() {
        for module in modules { PushProvider.register(module.description) }
    }

    /// Each module with its block of `configuration` (an empty block: a module that serves nothing).
    static func load(_ configuration: WorkerConfiguration) throws -> [any ProviderModule] {
        try modules.map { module in
            try module.init(block: configuration.providerBlocks[module.description.name] ?? ConfigurationBlock(name: module.description.name))
        }
    }
}
