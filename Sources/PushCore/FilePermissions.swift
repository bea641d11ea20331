import Foundation

/// Secrets in files (a .p8 key, a client certificate with its key) should be readable by their owner
/// only. A looser mode is not an error, since containers mount secrets in many ways, but it is said at startup.
public enum FilePermissions {
    /// A warning if `path` can be read by its group or by others; nil if not (or if it cannot be examined).
    public static func exposureWarning(path: String, key: String) -> String? {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
              let mode = (attributes[.posixPermissions] as? NSNumber)?.uint16Value
        else { return nil }
        guard mode & 0o044 != 0 else { return nil }
        let octal = String(mode & 0o777, radix: 8)
        return "\(key) \(path) is readable by \(mode & 0o004 != 0 ? "everyone" : "its group") (mode \(octal)); chmod 600 it"
    }

    /// The warnings for every credential file of the configuration.
    public static func warnings(for configuration: WorkerConfiguration) -> [String] {
        configuration.apns.apps.enumerated().compactMap { index, app in
            switch app.credential {
            case .token(_, _, let file): return exposureWarning(path: file, key: "apns.apps.\(index).key_file")
            case .certificate(let file, _): return exposureWarning(path: file, key: "apns.apps.\(index).cert_file")
            }
        }
    }
}
