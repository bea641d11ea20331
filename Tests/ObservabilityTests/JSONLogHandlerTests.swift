import Foundation
import Logging
import Observability
import PushCore
import XCTest

/// `log.format: json`: each event is one line holding one JSON object with the fields the text format shows.
final class JSONLogHandlerTests: XCTestCase {
    final class Lines: @unchecked Sendable {
        private let lock = NSLock()
        private var bytes: [UInt8] = []
        func append(_ more: [UInt8]) { lock.withLock { bytes += more } }
        var text: String { lock.withLock { String(decoding: bytes, as: UTF8.self) } }
    }

    func testEachEventIsOneJSONObjectPerLineWithItsFields() throws {
        let lines = Lines()
        var logger = Logger(label: "worker") { label in JSONLogHandler(label: label, level: .info) { lines.append($0) } }
        logger[metadataKey: "worker"] = "w1"
        logger.info("acknowledgement failed; retrying", metadata: [
            "error": "Redis connection: \"quoted\"\nand a newline", "messages": "27", "message": "a key named like a field",
            "nested": .dictionary(["list": .array(["a", "b"])]),
        ])
        logger.debug("not at info")
        logger.warning("second")
        let text = lines.text
        XCTAssertTrue(text.hasSuffix("\n"))
        let split = text.split(separator: "\n")
        XCTAssertEqual(split.count, 2, "one line per event at or above the level: \(text)")
        let first = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(split[0].utf8)) as? [String: Any])
        XCTAssertEqual(first["level"] as? String, "info")
        XCTAssertEqual(first["label"] as? String, "worker")
        XCTAssertEqual(first["message"] as? String, "acknowledgement failed; retrying")
        XCTAssertEqual(first["error"] as? String, "Redis connection: \"quoted\"\nand a newline")
        XCTAssertEqual(first["messages"] as? String, "27")
        XCTAssertEqual(first["worker"] as? String, "w1")
        XCTAssertEqual(first["metadata.message"] as? String, "a key named like a field", "a fixed field is never overwritten")
        XCTAssertEqual((first["nested"] as? [String: Any])?["list"] as? [String], ["a", "b"])
        let timestamp = try XCTUnwrap(first["timestamp"] as? String)
        XCTAssertNotNil(try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(timestamp), timestamp)
        let second = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(split[1].utf8)) as? [String: Any])
        XCTAssertEqual(second["level"] as? String, "warning")
    }

    func testTheConfigurationChoosesTheFormatAndRefusesOthers() throws {
        XCTAssertEqual(try ConfigurationLoader(environment: [:]).load(yaml: "log: {format: json, level: debug}").log,
                       { var log = LogSettings(); log.format = .json; log.level = "debug"; return log }())
        XCTAssertEqual(try ConfigurationLoader(environment: ["LOG_FORMAT": "json"]).load(yaml: "").log.format, .json)
        XCTAssertThrowsError(try ConfigurationLoader(environment: [:]).load(yaml: "log: {format: xml}")) { error in
            XCTAssertEqual("\(error)", "configuration log.format: 'xml' is not text or json")
        }
        XCTAssertThrowsError(try ConfigurationLoader(environment: ["LOG_LEVEL": "loud"]).load(yaml: ""))
        XCTAssertEqual(ConfigurationLoader(environment: ["LOG_FORMAT": "json", "LOG_LEVEL": "loud"]).environmentLogSettings().format, .json,
                       "what logs a configuration error takes what it can from the environment")
    }
}
