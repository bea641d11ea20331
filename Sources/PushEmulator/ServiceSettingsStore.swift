/// A vendor side's settings type (what `EmulatorConfiguration.<vendor>` is): its defaults are a side nobody configured.
public protocol EmulatedServiceSettings: Sendable {
    init()
}

/// The vendor sides' settings, one value per settings type. A side's folder declares its settings and an accessor on
/// `EmulatorConfiguration` that reads and writes them here (`configuration.<vendor>.apps = ...`), so the configuration
/// holds no property per vendor and a new side adds none.
public struct ServiceSettingsStore: Sendable {
    private var values: [ObjectIdentifier: any Sendable] = [:]

    public init() {}

    /// The settings stored for `type`, or its defaults when none were.
    public subscript<Settings: EmulatedServiceSettings>(_ type: Settings.Type) -> Settings {
        get { values[ObjectIdentifier(type)] as? Settings ?? Settings() }
        set { values[ObjectIdentifier(type)] = newValue }
    }
}
