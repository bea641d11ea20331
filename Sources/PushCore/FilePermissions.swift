import Foundation

/// Secrets in files (a signing key, a client certificate with its key, a service account) should be readable
/// by the worker only. A looser mode is not an error, since containers mount secrets in many ways, but a file
/// everyone can read is said at startup. A file its group can read is not: on Kubernetes a Secret is mounted
/// 0440 for the pod's `fsGroup`, the worker's own group (deploy/kubernetes/base), and that is as it should be.
public enum FilePermissions {
    /// A warning if `path` can be read by everyone; nil if not (or if it cannot be examined).
    ///
    /// The mode is the file's the link leads to (stat, not lstat): a Kubernetes Secret's files are symlinks
    /// (`key.p8 -> ..data/key.p8`), and a link's own mode is always 777, which said every mounted key was exposed.
    /// What the worker reads is the target, so its mode is what matters.
    public static func exposureWarning(path: String, key: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        let mode = info.st_mode
        guard mode & 0o004 != 0 else { return nil }
        let octal = String(mode & 0o777, radix: 8)
        return "\(key) \(path) is readable by everyone (mode \(octal)); chmod 600 it (or 440 for a group of the worker's own)"
    }

    /// The warnings for every credential file of the configuration.
    public static func warnings(for configuration: WorkerConfiguration) -> [String] {
        // Each provider's files, by the app keys its module names as secret (`ProviderDescription.secretFileAppKeys`).
        PushProvider.modules.flatMap { module -> [String] in
            guard let block = configuration.providerBlocks[module.description.name] else { return [] }
            return block.appIndices.flatMap { index in
                module.description.secretFileAppKeys.compactMap { key -> String? in
                    guard let path = block.values["apps.\(index).\(key)"]?.trimmingCharacters(in: .whitespaces), !path.isEmpty else { return nil }
                    return exposureWarning(path: path, key: block.fullKey("apps.\(index).\(key)"))
                }
            }
        }
    }
}
