import PushCore

/// A provider module's configuration block, declared once (`SettingKey`s for the block and for each app): the
/// keys it accepts, the secret files among them, how it is read into the module's settings and how `check-config`
/// shows them all follow from the declaration. Defaults are the settings structs' own (`Settings` as made by
/// `settings`, each app as made by `app`).
///
/// Every app needs a `topic` (the messages' `topic`), unique in the block: checked here for every module.
public struct SettingsBlock<Settings, App>: @unchecked Sendable {
    // @unchecked: the closures and key paths are immutable.
    public let name: String
    public let keys: [SettingKey<Settings>]
    public let appKeys: [SettingKey<App>]
    let settings: () -> Settings
    let app: () -> App
    let apps: WritableKeyPath<Settings, [App]>
    let topic: KeyPath<App, String>
    /// Derived values and checks across an app's keys (a package that defaults to the topic, keys that go
    /// together), after its keys are read; an error names the app's key.
    let finishApp: (_ app: inout App, _ key: String) throws -> Void

    public init(name: String, keys: [SettingKey<Settings>], appKeys: [SettingKey<App>],
                settings: @escaping () -> Settings, app: @escaping () -> App,
                apps: WritableKeyPath<Settings, [App]>, topic: KeyPath<App, String>,
                finishApp: @escaping (_ app: inout App, _ key: String) throws -> Void = { _, _ in }) {
        self.name = name
        self.keys = keys
        self.appKeys = appKeys
        self.settings = settings
        self.app = app
        self.apps = apps
        self.topic = topic
        self.finishApp = finishApp
    }

    /// The block's scalar keys, for `ProviderDescription.settingsKeys`.
    public var keyNames: [String] { keys.map(\.name) }
    /// Each app's keys, for `ProviderDescription.appKeys`.
    public var appKeyNames: [String] { appKeys.map(\.name) }
    /// The app keys that name a secret file, for `ProviderDescription.secretFileAppKeys`.
    public var secretFileAppKeys: [String] { appKeys.filter(\.namesSecretFile).map(\.name) }

    /// Reads `block` into the module's settings: the defaults, then each key the block has, in the declared order
    /// (a key may depend on one before it), then each app. A bad value is an error naming its full key.
    public func read(_ block: ConfigurationBlock) throws -> Settings {
        var result = settings()
        for key in keys { try key.read(&result, block, "") }
        var topics: Set<String> = []
        for index in block.appIndices {
            let prefix = "apps.\(index)."
            var app = app()
            for key in appKeys { try key.read(&app, block, prefix) }
            let topic = app[keyPath: topic]
            guard !topic.isEmpty else { throw ConfigurationError.invalid(key: block.fullKey(prefix + "topic"), reason: "is empty") }
            guard topics.insert(topic).inserted else {
                throw ConfigurationError.invalid(key: block.fullKey(prefix + "topic"), reason: "\(Printable.clipped(topic, to: 80)) is configured twice")
            }
            try finishApp(&app, block.fullKey("apps.\(index)"))
            result[keyPath: apps].append(app)
        }
        return result
    }

    /// `check-config`'s lines for `settings`: a line per block key (`<name>.<key>: <value>`), a line per app
    /// (`<name>.apps.<n>: <topic>, <key> <value>, ...`), defaults included; secret files by path, never contents.
    public func summaryLines(_ settings: Settings) -> [String] {
        let blockLines = keys.compactMap { key in key.show(settings).map { "\(name).\(key.name): \($0)" } }
        let appLines = settings[keyPath: apps].enumerated().map { index, app in
            let rest = appKeys.filter { $0.name != "topic" }.compactMap { key in key.show(app).map { "\(key.name) \($0)" } }
            return "\(name).apps.\(index): " + ([app[keyPath: topic]] + rest).joined(separator: ", ")
        }
        return blockLines + appLines
    }
}

extension ProviderDescription {
    /// A module's description with its configuration keys taken from its declared block.
    public init<Settings, App>(name: String, messageRules: AndroidVendorRules, parse: (any ProviderMessageRules)? = nil,
                               alertTexts: (@Sendable (_ payload: JSONValue, _ extraFields: [String]) -> [String])? = nil,
                               requestPreview: (@Sendable (_ message: PushMessage, _ nowSeconds: Int64) -> [(field: String, value: String)])? = nil,
                               block: SettingsBlock<Settings, App>,
                               permanentReasons: Set<String> = [], knownResponses: [(status: Int, reason: String)] = []) {
        self.init(name: name, messageRules: messageRules, parse: parse, alertTexts: alertTexts, requestPreview: requestPreview,
                  settingsKeys: block.keyNames, appKeys: block.appKeyNames, secretFileAppKeys: block.secretFileAppKeys,
                  permanentReasons: permanentReasons, knownResponses: knownResponses)
    }
}
