import Foundation
import PushCore
import XCTest

/// The published JSON Schema (`schema/message.schema.json`) and the worker's parser agree on the examples
/// shipped beside it: every valid example is a message the worker sends, every invalid one a dead letter
/// (`scripts/check-schema.py` holds the schema to the same files).
final class SchemaExamplesTests: XCTestCase {
    private var examples: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("schema/examples")
    }

    private func files(_ folder: String) throws -> [URL] {
        try FileManager.default.contentsOfDirectory(at: examples.appendingPathComponent(folder), includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "json" }.sorted { $0.path < $1.path }
    }

    private func parse(_ file: URL) throws -> ParsedElement {
        MessageParser().parse(Array(try Data(contentsOf: file)), seq: 1, now: Int64(Date().timeIntervalSince1970))
    }

    func testEveryValidExampleIsAcceptedByTheParser() throws {
        let valid = try files("valid")
        XCTAssertGreaterThanOrEqual(valid.count, 10)
        for file in valid {
            guard case .valid = try parse(file) else { return XCTFail("\(file.lastPathComponent): \(try parse(file))") }
        }
    }

    func testEveryInvalidExampleIsADeadLetter() throws {
        let invalid = try files("invalid")
        XCTAssertGreaterThanOrEqual(invalid.count, 12)
        for file in invalid {
            if case .valid = try parse(file) { XCTFail("\(file.lastPathComponent) was accepted") }
        }
    }
}
