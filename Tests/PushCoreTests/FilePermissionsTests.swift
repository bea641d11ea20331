import APNsProvider
import FCMProvider
import Foundation
import HuaweiProvider
import PushCore
import TestSupport
import XCTest
import XiaomiProvider

/// The startup warning for a credential file readable by everyone, judged by the file a link leads to.
final class FilePermissionsTests: XCTestCase {
    /// Lays a file out as Kubernetes mounts a Secret: `key.p8 -> ..data/key.p8`, `..data -> ..<timestamp>`, the
    /// file itself in the timestamped directory. Returns the path the configuration names.
    private func secretMount(mode: mode_t) throws -> String {
        let directory = makeTemporaryDirectory("file-permissions")
        let version = directory + "/..2026_11_27_12_00_00.000000001"
        try FileManager.default.createDirectory(atPath: version, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(atPath: directory) }
        let target = version + "/key.p8"
        FileManager.default.createFile(atPath: target, contents: Data("key".utf8))
        XCTAssertEqual(chmod(target, mode), 0)
        try FileManager.default.createSymbolicLink(atPath: directory + "/..data", withDestinationPath: "..2026_11_27_12_00_00.000000001")
        try FileManager.default.createSymbolicLink(atPath: directory + "/key.p8", withDestinationPath: "..data/key.p8")
        return directory + "/key.p8"
    }

    func testALinkToAPrivateFileIsNoWarning() throws {
        XCTAssertNil(FilePermissions.exposureWarning(path: try secretMount(mode: 0o600), key: "apns.apps.0.key_file"),
                     "the link's own mode (777) is not the key's")
        XCTAssertNil(FilePermissions.exposureWarning(path: try secretMount(mode: 0o440), key: "apns.apps.0.key_file"))
    }

    func testALinkToAFileEveryoneCanReadIsAWarningWithTheTargetsMode() throws {
        let path = try secretMount(mode: 0o644)
        XCTAssertEqual(FilePermissions.exposureWarning(path: path, key: "apns.apps.0.key_file"),
                       "apns.apps.0.key_file \(path) is readable by everyone (mode 644); chmod 600 it (or 440 for a group of the worker's own)")
    }

    /// Every provider's secret files (the keys its module's description names): each file everyone can read is
    /// said with its full key; a private one and a key that names no secret are not.
    func testEveryProvidersSecretFilesAreChecked() throws {
        for module in [APNsModule.description, FCMModule.description, HuaweiModule.description, XiaomiModule.description] {
            PushProvider.register(module)
        }
        let exposed = try secretMount(mode: 0o644)
        let private_ = try secretMount(mode: 0o600)
        let yaml = """
        apns:
          apps:
            - { topic: a.key, team_id: TEAM123456, key_id: KEY1234567, key_file: \(exposed) }
            - { topic: a.cert, cert_file: \(private_) }
            - { topic: b.cert, cert_file: \(exposed), cert_password: \(exposed) }
        fcm:
          apps:
            - topic: a.fcm
              service_account_file: \(exposed)
        huawei:
          apps:
            - topic: a.huawei
              app_id: "1"
              client_secret_file: \(private_)
            - topic: b.huawei
              api: v3
              service_account_file: \(exposed)
        xiaomi:
          apps:
            - topic: a.xiaomi
              package: a.xiaomi
              app_secret_file: \(exposed)
              channel_id: \(exposed)
        """
        let configuration = try ConfigurationLoader(environment: [:]).load(yaml: yaml)
        let warned = FilePermissions.warnings(for: configuration).map { String($0.prefix { $0 != " " }) }
        XCTAssertEqual(warned.sorted(), ["apns.apps.0.key_file", "apns.apps.2.cert_file", "fcm.apps.0.service_account_file", "huawei.apps.1.service_account_file",
                                         "xiaomi.apps.0.app_secret_file"])
    }
}
