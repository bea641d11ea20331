import Foundation
import PushCore

/// One key of a provider's configuration block, declared once: its name, how its value is read and checked (into a
/// field of the module's settings, through a key path), how `check-config` shows it, and whether it names a file
/// holding a secret. The field's default is the settings struct's own; a key not in the block leaves it.
///
/// The declarations of a block (`SettingsBlock`) are all a module writes about its keys: the keys the configuration
/// accepts (unknown ones are refused, each can come from the environment), the secret files the start-up check
/// looks at, the reading and the summary lines follow from them.
public struct SettingKey<Root>: @unchecked Sendable {
    // @unchecked: the closures capture only key paths and constants, which are immutable.
    public let name: String
    /// Names a file holding a secret (a key, a service account): the worker warns at start-up when others can read it.
    public let namesSecretFile: Bool
    /// Reads the key's value from `block` (its full key: `prefix` + `name`) into `root`; a bad value is an error
    /// naming the key.
    let read: (_ root: inout Root, _ block: ConfigurationBlock, _ prefix: String) throws -> Void
    /// The value as `check-config` shows it, nil to leave it out (an optional key not set).
    let show: (_ root: Root) -> String?

    public init(_ name: String, namesSecretFile: Bool = false,
                read: @escaping (_ root: inout Root, _ block: ConfigurationBlock, _ prefix: String) throws -> Void,
                show: @escaping (_ root: Root) -> String?) {
        self.name = name
        self.namesSecretFile = namesSecretFile
        self.read = read
        self.show = show
    }
}

/// How an empty value is shown: as "(none)", as what an empty value means (`said`), or not at all (an optional key
/// whose absence says nothing).
public enum EmptyValue: Sendable, Equatable {
    case none
    case said(String)
    case hidden
}

extension SettingKey {
    /// Text, surrounding whitespace trimmed.
    public static func text(_ name: String, _ path: WritableKeyPath<Root, String>, empty: EmptyValue = .none) -> SettingKey {
        SettingKey(name, read: { root, block, prefix in
            root[keyPath: path] = block.string(prefix + name, root[keyPath: path]).trimmingCharacters(in: .whitespaces)
        }, show: { shown($0[keyPath: path], empty: empty) })
    }

    /// `https://host[:port]` without a trailing slash (with a path where `allowPath`); "" stays "" where the
    /// default is "" (an optional host, such as an app's own region).
    public static func httpsURL(_ name: String, _ path: WritableKeyPath<Root, String>, allowPath: Bool = false,
                                empty: EmptyValue = .none) -> SettingKey {
        SettingKey(name, read: { root, block, prefix in
            let current = root[keyPath: path]
            let written = block.string(prefix + name, current).trimmingCharacters(in: .whitespaces)
            if written.isEmpty && current.isEmpty { return }
            root[keyPath: path] = try block.httpsURL(prefix + name, current, allowPath: allowPath)
        }, show: { shown($0[keyPath: path], empty: empty) })
    }

    /// A whole number within `min...max` (by default up to 2^31 - 1, so no arithmetic on it can overflow).
    public static func number(_ name: String, _ path: WritableKeyPath<Root, Int>, min: Int, max: Int = Int(Int32.max)) -> SettingKey {
        SettingKey(name, read: { root, block, prefix in
            root[keyPath: path] = try block.int(prefix + name, root[keyPath: path], min: min, max: max)
        }, show: { String($0[keyPath: path]) })
    }

    /// A file holding a secret: its path is shown, never its contents.
    public static func secretFile(_ name: String, _ path: WritableKeyPath<Root, String>, empty: EmptyValue = .none) -> SettingKey {
        SettingKey(name, namesSecretFile: true, read: { root, block, prefix in
            root[keyPath: path] = block.string(prefix + name, root[keyPath: path]).trimmingCharacters(in: .whitespaces)
        }, show: { shown($0[keyPath: path], empty: empty) })
    }

    /// One of a fixed set of words (an enumeration's raw values); anything else is an error listing them.
    public static func choice<Value: RawRepresentable & CaseIterable>(_ name: String, _ path: WritableKeyPath<Root, Value>) -> SettingKey
    where Value.RawValue == String {
        SettingKey(name, read: { root, block, prefix in
            let text = block.string(prefix + name, root[keyPath: path].rawValue).trimmingCharacters(in: .whitespaces)
            guard let value = Value(rawValue: text) else {
                let words = Value.allCases.map(\.rawValue).joined(separator: ", ")
                throw ConfigurationError.invalid(key: block.fullKey(prefix + name),
                                                 reason: "'\(Printable.clipped(text, to: 20))' is not one of \(words)")
            }
            root[keyPath: path] = value
        }, show: { $0[keyPath: path].rawValue })
    }

    private static func shown(_ value: String, empty: EmptyValue) -> String? {
        guard value.isEmpty else { return value }
        switch empty {
        case .none: return "(none)"
        case .said(let meaning): return meaning
        case .hidden: return nil
        }
    }
}

/// The keys every service block has, declared once for every module: where the service is, the CA to trust, the
/// connections an app keeps (opened at start, and at most), and how long a request may take on the wire.
extension SettingKey {
    public static func endpoint(_ path: WritableKeyPath<Root, String>) -> SettingKey { .httpsURL("endpoint", path) }

    /// An extra CA to trust (the emulator, tests); "" for the system's roots.
    public static func caFile(_ path: WritableKeyPath<Root, String>) -> SettingKey {
        SettingKey("ca_file", read: { root, block, prefix in
            root[keyPath: path] = block.string(prefix + "ca_file", root[keyPath: path]).trimmingCharacters(in: .whitespaces)
        }, show: { $0[keyPath: path].isEmpty ? "(system CAs)" : $0[keyPath: path] })
    }

    public static func connections(_ path: WritableKeyPath<Root, Int>) -> SettingKey {
        .number("connections", path, min: 1, max: 1024)
    }

    /// At least `connections` (read before it), and by default raised to it.
    public static func maxConnections(_ path: WritableKeyPath<Root, Int>, connections: KeyPath<Root, Int>) -> SettingKey {
        SettingKey("max_connections", read: { root, block, prefix in
            let least = root[keyPath: connections]
            root[keyPath: path] = try block.int(prefix + "max_connections", Swift.max(root[keyPath: path], least), min: least, max: 1024)
        }, show: { String($0[keyPath: path]) })
    }

    public static func requestTimeout(_ path: WritableKeyPath<Root, Int>) -> SettingKey {
        .number("request_timeout_ms", path, min: 1)
    }
}
