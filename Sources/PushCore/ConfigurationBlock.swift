import Foundation

/// One provider module's configuration block as written (`<name>.endpoint`, `<name>.apps.0.topic`, ... with the
/// block's name taken off), for the module to read into its own settings, with the same checks and error texts as
/// the core's blocks: a bad value names its full key.
public struct ConfigurationBlock: Sendable, Equatable {
    public let name: String
    /// Keys without the block's name: `endpoint`, `apps.0.topic`.
    public var values: [String: String] = [:]

    public init(name: String, values: [String: String] = [:]) {
        self.name = name
        self.values = values
    }

    /// The full key of `key`, as errors name it.
    public func fullKey(_ key: String) -> String { "\(name).\(key)" }

    public func string(_ key: String, _ fallback: String) -> String { values[key] ?? fallback }

    /// A whole number within `min...max` (by default up to 2^31 - 1, so no arithmetic on it can overflow).
    public func int(_ key: String, _ fallback: Int, min: Int, max: Int = Int(Int32.max)) throws -> Int {
        guard let text = values[key] else { return fallback }
        guard let value = Int(text.trimmingCharacters(in: .whitespaces)) else {
            throw ConfigurationError.invalid(key: fullKey(key), reason: "'\(Printable.clipped(text, to: 40))' is not a whole number")
        }
        guard value >= min else { throw ConfigurationError.invalid(key: fullKey(key), reason: "must be at least \(min)") }
        guard value <= max else { throw ConfigurationError.invalid(key: fullKey(key), reason: "must be at most \(max)") }
        return value
    }

    /// `https://host[:port]` with no path, without a trailing slash (`https://host:port/path` when `allowPath`).
    public func httpsURL(_ key: String, _ fallback: String, allowPath: Bool = false) throws -> String {
        let trimmed = string(key, fallback).trimmingCharacters(in: .whitespaces)
        guard let url = URLComponents(string: trimmed), url.scheme == "https", let host = url.host, !host.isEmpty else {
            throw ConfigurationError.invalid(key: fullKey(key), reason: "'\(Printable.clipped(trimmed, to: 80))' is not https://host[:port]")
        }
        if !allowPath && !(url.path.isEmpty || url.path == "/") {
            throw ConfigurationError.invalid(key: fullKey(key), reason: "'\(Printable.clipped(trimmed, to: 80))' must have no path")
        }
        return trimmed.hasSuffix("/") ? String(trimmed.dropLast()) : trimmed
    }

    /// The indices of the block's `apps` list, in order.
    public var appIndices: [Int] {
        Set(values.keys.compactMap { key -> Int? in
            guard key.hasPrefix("apps.") else { return nil }
            return Int(key.dropFirst(5).prefix { $0.isNumber })
        }).sorted()
    }

    /// The topics of the block's apps (for tools that list the apps without reading the module's settings).
    public var appTopics: [String] {
        appIndices.compactMap { values["apps.\($0).topic"]?.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }
}

/// A block holds its values as written, and some are secrets (a certificate's password): what a log, `dump` or a
/// debugger shows of it is its keys alone. The module's settings, read from it, say what each value means and show
/// them with the secrets redacted (`check-config`'s summary).
extension ConfigurationBlock: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String {
        "\(name) block: \(values.keys.sorted().joined(separator: ", ")) (values not shown: one may be a secret)"
    }

    public var debugDescription: String { description }

    public var customMirror: Mirror {
        Mirror(self, children: ["name": name, "keys": values.keys.sorted()], displayStyle: .struct)
    }
}
