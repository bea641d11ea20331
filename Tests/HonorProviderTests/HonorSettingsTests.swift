import HonorProvider
import PushCore
import XCTest

/// The `honor` block as the configuration gives it: the keys, their defaults, what is refused, what check-config
/// shows.
final class HonorSettingsTests: XCTestCase {
    private func module(_ values: [String: String]) throws -> HonorModule {
        try HonorModule(block: ConfigurationBlock(name: "honor", values: values))
    }

    func testAnAppWithItsDefaults() throws {
        let settings = try module(["apps.0.topic": "com.example.chat", "apps.0.app_id": "104", "apps.0.client_id": "c1",
                                   "apps.0.client_secret_file": "honor-secret.txt"]).settings
        XCTAssertEqual(settings.endpoint, "https://push-api.cloud.honor.com")
        XCTAssertEqual(settings.tokenURI, "https://iam.developer.honor.com/auth/token")
        XCTAssertEqual(settings.apps, [HonorApp(topic: "com.example.chat", appID: "104", clientID: "c1", clientSecretFile: "honor-secret.txt")])
        XCTAssertEqual(settings.apps[0].importance(for: .chat), "NORMAL", "chat is service and communication by default")
        XCTAssertEqual(settings.apps[0].importance(for: .bulk), "", "bulk sends none: Honor's default, marketing")
        XCTAssertEqual(settings.apps[0].tokensPerSecond, 3000)
    }

    func testAnAppNeedsItsIDClientAndSecret() {
        XCTAssertThrowsError(try module(["apps.0.topic": "com.example.chat", "apps.0.app_id": "104"])) { error in
            XCTAssertEqual(error as? ConfigurationError, .invalid(key: "honor.apps.0", reason: "needs app_id, client_id and client_secret_file"))
        }
    }

    func testTheSummaryNamesTheSecretFileNeverItsContentsAndWarnsWithoutAChatClass() throws {
        let honor = try module(["apps.0.topic": "com.example.chat", "apps.0.app_id": "104", "apps.0.client_id": "c1",
                                "apps.0.client_secret_file": "honor-secret.txt", "apps.0.importance": ""])
        XCTAssertTrue(honor.summaryLines.contains("honor.apps.0: com.example.chat, app_id 104, client_id c1, client_secret_file honor-secret.txt, "
                                                  + "importance (none), system_importance (none), bulk_importance (none), tokens_per_s 3000"),
                      honor.summaryLines.joined(separator: "\n"))
        XCTAssertEqual(honor.warnings.count, 1)
        XCTAssertEqual(HonorModule.description.secretFileAppKeys, ["client_secret_file"])
    }
}
