import Foundation

/// Secrets in files (a .p8 key, a client certificate with its key, an FCM service account) should be readable
/// by the worker only. A looser mode is not an error, since containers mount secrets in many ways, but a file
/// everyone can read is said at startup. A file its group can read is not: on Kubernetes a Secret is mounted
/// 0440 for the pod's `fsGroup`, the worker's own group (deploy/kubernetes/base), and that is as it should be.
public enum FilePermissions {
    /// A warning if `path` can be read by everyone; nil if not (or if it cannot be examined).
    public static func exposureWarning(path: String, key: String) -> String? {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
              let mode = (attributes[.posixPermissions] as? NSNumber)?.uint16Value
        else { return nil }
        guard mode & 0o004 != 0 else { return nil }
        let octal = String(mode & 0o777, radix: 8)
        return "\(key) \(path) is readable by everyone (mode \(octal)); chmod 600 it (or 440 for a group of the worker's own)"
    }

    /// The warnings for every credential file of the configuration.
    public static func warnings(for configuration: WorkerConfiguration) -> [String] {
        let apns = configuration.apns.apps.enumerated().compactMap { index, app in
            switch app.credential {
            case .token(_, _, let file): return exposureWarning(path: file, key: "apns.apps.\(index).key_file")
            case .certificate(let file, _): return exposureWarning(path: file, key: "apns.apps.\(index).cert_file")
            }
        }
        let fcm = configuration.fcm.apps.enumerated().compactMap { index, app in
            exposureWarning(path: app.serviceAccountFile, key: "fcm.apps.\(index).service_account_file")
        }
        return apns + fcm
    }
}
