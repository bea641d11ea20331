/// `provider` of docs/message-format.md: which service a message goes to. Part of a job's headers, so messages for
/// different services never merge.
///
/// A small number, so that comparing two messages' headers costs what comparing an enum did. APNs and FCM are
/// built in; every other service is a provider module (docs/architecture.md, "Providers") that registers its name
/// at start-up (`register`), before any message or configuration is read, and gets the next number. Nothing in the
/// core names such a provider: the name comes from its module.
public struct PushProvider: Sendable, Hashable, CustomStringConvertible {
    /// Its place among the registered providers (0 APNs, 1 FCM, then the modules in registration order).
    public let index: Int

    /// Apple Push Notification service (docs/transport.md); the default.
    public static let apns = PushProvider(index: 0)
    /// Firebase Cloud Messaging HTTP v1 (docs/fcm.md).
    public static let fcm = PushProvider(index: 1)

    private init(index: Int) { self.index = index }

    /// The provider named `rawValue` (`"apns"`, `"fcm"`, or a registered module's name); nil if none is.
    public init?(rawValue: String) {
        guard let index = Self.registry.withLock({ $0.firstIndex { $0.name == rawValue } }) else { return nil }
        self.index = index
    }

    /// Its name as producers write it and as records, keys and metric labels carry it.
    public var rawValue: String { Self.registry.withLock { $0[index].name } }
    public var description: String { rawValue }

    /// Every registered provider, APNs and FCM first.
    public static var allCases: [PushProvider] {
        (0..<registry.withLock { $0.count }).map { PushProvider(index: $0) }
    }

    /// What a registered provider module told about itself; nil for APNs and FCM, whose rules are the core's own.
    public var module: ProviderDescription? { Self.registry.withLock { $0[index].module } }
    /// Every provider's name in quotes, `"apns", "fcm" or "<module>"`, for error texts.
    public static var namesForErrors: String {
        let names = allCases.map { "\"\($0.rawValue)\"" }
        return names.count < 2 ? names.joined() : names.dropLast().joined(separator: ", ") + " or " + names.last!
    }

    /// The message rules of a registered provider module (China's Android vendors).
    public var vendorRules: AndroidVendorRules? { module?.messageRules }

    /// The registered provider modules, in registration order.
    public static var modules: [(provider: PushProvider, description: ProviderDescription)] {
        registry.withLock { entries in
            entries.indices.compactMap { index in entries[index].module.map { (PushProvider(index: index), $0) } }
        }
    }

    /// Registers a provider module; registering a name again returns its provider (the first description stays).
    /// Called at start-up, before any configuration or message is read.
    @discardableResult
    public static func register(_ module: ProviderDescription) -> PushProvider {
        registry.withLock { entries in
            if let index = entries.firstIndex(where: { $0.name == module.name }) { return PushProvider(index: index) }
            entries.append(Entry(name: module.name, module: module))
            return PushProvider(index: entries.count - 1)
        }
    }

    private struct Entry {
        let name: String
        let module: ProviderDescription?
    }

    private static let registry = Locked([Entry(name: "apns", module: nil), Entry(name: "fcm", module: nil)])
}

/// What the core needs to know of a provider module before any of its code runs: its name (the messages'
/// `provider`, its configuration block, its metric namespace `push_<name>_*`), its message rules, and the keys of
/// its configuration block (unknown keys are refused, as everywhere, and each can come from the environment).
public struct ProviderDescription: Sendable, Equatable {
    public var name: String
    public var messageRules: AndroidVendorRules
    /// The block's scalar keys, without the block's name (`endpoint`, `connections`, ...).
    public var settingsKeys: [String]
    /// The keys of each app of the block's `apps` list (`topic`, ...).
    public var appKeys: [String]
    /// Its dead-letter reasons no replay can fix (the vendor's codes for a bad message): `worker dlq replay` skips
    /// them unless told to include permanent failures.
    public var permanentReasons: Set<String>

    public init(name: String, messageRules: AndroidVendorRules, settingsKeys: [String], appKeys: [String],
                permanentReasons: Set<String> = []) {
        self.name = name
        self.messageRules = messageRules
        self.settingsKeys = settingsKeys
        self.appKeys = appKeys
        self.permanentReasons = permanentReasons
    }
}
