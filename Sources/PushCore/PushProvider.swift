/// `provider` of docs/message-format.md: which service a message goes to. Part of a job's headers, so messages for
/// different services never merge.
///
/// A small number, so that comparing two messages' headers costs what comparing an enum did. Every service is a
/// provider module (docs/architecture.md, "Providers") that registers its name at start-up, before any message or
/// configuration is read: the default provider's module as the default (`registerDefault`, number 0: a message
/// without `provider` is its), every other with `register`, taking the next number. Nothing in the core names a
/// provider: the name comes from its module.
public struct PushProvider: Sendable, Hashable, CustomStringConvertible {
    /// Its place among the registered providers (0 the default, then the others in registration order).
    public let index: Int

    /// The default provider: a message without `provider` is its, and so is a record without one (feedback, dead
    /// letters, the filter's audit) and what cannot be said to be anyone's (an element that does not parse).
    public static let `default` = PushProvider(index: 0)

    private init(index: Int) { self.index = index }

    /// The registered provider named `rawValue`; nil if none is.
    public init?(rawValue: String) {
        guard let index = Self.registry.withLock({ $0.firstIndex { $0?.name == rawValue } }) else { return nil }
        self.index = index
    }

    /// Its name as producers write it and as records, keys and metric labels carry it. Only a registered provider
    /// has one: the default provider's before its module registers is a mistake of the program (every entry point
    /// registers the providers first), and stops it with a message that says so.
    public var rawValue: String {
        guard let name = Self.registry.withLock({ index < $0.count ? $0[index]?.name : nil }) else {
            fatalError("provider \(index) is not registered: register the providers (PushProvider.registerDefault, register) before reading a configuration or a message")
        }
        return name
    }
    public var description: String { rawValue }

    /// Every registered provider, the default one first.
    public static var allCases: [PushProvider] {
        registry.withLock { entries in entries.indices.filter { entries[$0] != nil }.map { PushProvider(index: $0) } }
    }

    /// What the provider's module told about itself; nil for the default provider before its module registers.
    public var module: ProviderDescription? { Self.registry.withLock { index < $0.count ? $0[index] : nil } }
    /// Every provider's name in quotes, `"<default>", "<module>" or "<module>"`, for error texts.
    public static var namesForErrors: String {
        let names = allCases.map { "\"\($0.rawValue)\"" }
        return names.count < 2 ? names.joined() : names.dropLast().joined(separator: ", ") + " or " + names.last!
    }

    /// A module's own rules for its messages (`ProviderDescription.parse`), read alone: the parser asks for them per
    /// message, where copying the whole description retained and released each of its fields.
    public var ownMessageRules: (any ProviderMessageRules)? { Self.registry.withLock { index < $0.count ? $0[index]?.parse : nil } }

    /// A module's own reading of the texts the filter scans (`ProviderDescription.alertTexts`), read alone for the
    /// same reason: the filter asks per message.
    public var ownAlertTexts: (@Sendable (_ payload: JSONValue, _ extraFields: [String]) -> [String])? {
        Self.registry.withLock { index < $0.count ? $0[index]?.alertTexts : nil }
    }

    /// The message rules of a registered provider module that takes the common Android shape (China's vendors);
    /// nil for a module that reads its messages with rules of its own (`ProviderDescription.parse`).
    public var vendorRules: AndroidVendorRules? {
        guard let module, module.parse == nil else { return nil }
        return module.messageRules
    }

    /// The registered provider modules, in registration order (the default one first).
    public static var modules: [(provider: PushProvider, description: ProviderDescription)] {
        registry.withLock { entries in
            entries.indices.compactMap { index in entries[index].map { (PushProvider(index: index), $0) } }
        }
    }

    /// Registers the default provider's module (number 0: a message without `provider` is its); registering it
    /// again returns it. Called at start-up, before any configuration or message is read, and before or after the
    /// other modules.
    @discardableResult
    public static func registerDefault(_ module: ProviderDescription) -> PushProvider {
        registry.withLock { entries in
            if entries[0] == nil, !entries.contains(where: { $0?.name == module.name }) { entries[0] = module }
            precondition(entries[0]?.name == module.name, "\(module.name) cannot be the default provider: \(entries[0]?.name ?? "") is")
            return .default
        }
    }

    /// Registers a provider module; registering a name again returns its provider (the first description stays).
    /// Called at start-up, before any configuration or message is read.
    @discardableResult
    public static func register(_ module: ProviderDescription) -> PushProvider {
        registry.withLock { entries in
            if let index = entries.firstIndex(where: { $0?.name == module.name }) { return PushProvider(index: index) }
            entries.append(module)
            return PushProvider(index: entries.count - 1)
        }
    }

    /// Slot 0 is the default provider's, empty until its module registers.
    private static let registry = Locked<[ProviderDescription?]>([nil])
}

/// What the core needs to know of a provider module before any of its code runs: its name (the messages'
/// `provider`, its configuration block, its `provider` label on the `push_provider_*` series), its message rules, and the keys of
/// its configuration block (unknown keys are refused, as everywhere, and each can come from the environment).
public struct ProviderDescription: Sendable {
    public var name: String
    /// The common Android shape's limits (China's vendors, docs/message-format.md); for a module with rules of its
    /// own (`parse`), only `tokensPerRequest` counts (what `worker explain` says of its requests).
    public var messageRules: AndroidVendorRules
    /// Rules of the module's own for reading its messages, where the common Android shape is not its payload; nil
    /// for that shape.
    public var parse: (any ProviderMessageRules)?
    /// The texts of a payload the word filter scans (what the user sees), given the payload and the configured
    /// keys (`filter.fields`); nil for the common Android shape's (`notification.title` and `.body`, the module's
    /// own object, the keys in `data`).
    public var alertTexts: (@Sendable (_ payload: JSONValue, _ extraFields: [String]) -> [String])?
    /// What `worker explain` shows of the request a message becomes (`request`, `body`, ... with their values),
    /// given the message and the time; nil: the payload, said to be mapped into the service's request when sent.
    public var requestPreview: (@Sendable (_ message: PushMessage, _ nowSeconds: Int64) -> [(field: String, value: String)])?
    /// The block's scalar keys, without the block's name (`endpoint`, `connections`, ...).
    public var settingsKeys: [String]
    /// The keys of each app of the block's `apps` list (`topic`, ...).
    public var appKeys: [String]
    /// Those of `appKeys` that name a file holding a secret (a key, a service account): the worker warns at
    /// start-up when one is readable by others.
    public var secretFileAppKeys: [String]
    /// Its dead-letter reasons no replay can fix (the service's codes for a bad message or token): `worker dlq
    /// replay` skips them unless told to include permanent failures.
    public var permanentReasons: Set<String>
    /// The service's answers made at 0 in `push_provider_responses_total` before the first event, so that a
    /// dashboard's rate of them reads 0 rather than nothing.
    public var knownResponses: [(status: Int, reason: String)]

    public init(name: String, messageRules: AndroidVendorRules, parse: (any ProviderMessageRules)? = nil,
                alertTexts: (@Sendable (_ payload: JSONValue, _ extraFields: [String]) -> [String])? = nil,
                requestPreview: (@Sendable (_ message: PushMessage, _ nowSeconds: Int64) -> [(field: String, value: String)])? = nil,
                settingsKeys: [String], appKeys: [String], secretFileAppKeys: [String] = [],
                permanentReasons: Set<String> = [], knownResponses: [(status: Int, reason: String)] = []) {
        self.name = name
        self.messageRules = messageRules
        self.parse = parse
        self.alertTexts = alertTexts
        self.requestPreview = requestPreview
        self.settingsKeys = settingsKeys
        self.appKeys = appKeys
        self.secretFileAppKeys = secretFileAppKeys
        self.permanentReasons = permanentReasons
        self.knownResponses = knownResponses
    }
}
