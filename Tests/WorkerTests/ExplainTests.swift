import Foundation
import TestSupport
import XCTest

/// `worker explain`: what the worker would do with a message, field by field, without sending it.
final class ExplainTests: ToolTestCase {
    private func explain(_ message: String, _ environment: [String: String] = [:]) async throws -> (status: Int32?, output: String) {
        let file = "\(directory!)/message-\(UUID().uuidString.prefix(6)).json"
        try message.write(toFile: file, atomically: true, encoding: .utf8)
        toolEnvironment = ["APNS_APPS_0_TOPIC": "com.example.chat", "APNS_APPS_0_CERT_FILE": "/nonexistent.pem"].merging(environment) { $1 }
        return try await tool(["explain", file])
    }

    func testAnAPNsMessageIsExplainedHeaderByHeaderWithItsIgnoredFields() async throws {
        let result = try await explain(messageJSON(id: "m1", tokens: [token("a1", 1), "nothex"], extra: ["colapse_id": "x", "priority": 5]))
        XCTAssertEqual(result.status, 0, result.output)
        XCTAssertTrue(result.output.contains("apns-priority: 5"), result.output)
        XCTAssertTrue(result.output.contains("apns-expiration: not sent (no expiration given"), result.output)
        XCTAssertTrue(result.output.contains("apns-collapse-id: not sent"), result.output)
        XCTAssertTrue(result.output.contains("feedback: 1 malformed token(s) go to feedback as BadDeviceToken: nothex"), result.output)
        XCTAssertTrue(result.output.contains("ignored: colapse_id (not fields of a message"), result.output)
        XCTAssertTrue(result.output.contains("app: com.example.chat (configured in apns.apps)"), result.output)
    }

    func testAnInvalidMessageIsADeadLetterAndExitsOne() async throws {
        let result = try await explain(#"{"id":"m1","topic":"com.example.chat","tokens":[],"payload":{}}"#)
        XCTAssertEqual(result.status, 1, result.output)
        XCTAssertTrue(result.output.contains("reason: Malformed: tokens is empty"), result.output)
    }

    func testAnFCMMessageShowsTheBodyItWouldSend() async throws {
        let result = try await explain(fcmMessageJSON(id: "f1", tokens: [fcmToken("d", 1)], extra: ["expiration": 0]),
                                       ["FCM_APPS_0_TOPIC": FCMStandIn.topic, "FCM_APPS_0_SERVICE_ACCOUNT_FILE": "/nonexistent.json"])
        XCTAssertEqual(result.status, 0, result.output)
        XCTAssertTrue(result.output.contains(#""ttl":"0s""#), result.output)
        XCTAssertTrue(result.output.contains(#""token":"\#(fcmToken("d", 1))""#), result.output)
    }
}
