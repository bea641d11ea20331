import APNsProvider
import Foundation
import FCMProvider
import HonorProvider
import HuaweiProvider
import OPPOProvider
import PushCore
import VivoProvider
import XiaomiProvider
import XCTest

/// The published JSON Schema (`schema/message.schema.json`) and the worker's parser agree on the examples
/// shipped beside it: every valid example is a message the worker sends, every invalid one a dead letter
/// (`scripts/check-schema.py` holds the schema to the same files).
final class SchemaExamplesTests: XCTestCase {
    /// The provider modules the worker registers at start (`Sources/worker/Providers.swift`), as it does.
    override class func setUp() {
        super.setUp()
        _ = APNsModule.provider
        PushProvider.register(FCMModule.description)
        PushProvider.register(HuaweiModule.description)
        PushProvider.register(XiaomiModule.description)
        PushProvider.register(HonorModule.description)
        PushProvider.register(OPPOModule.description)
        PushProvider.register(VivoModule.description)
    }
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

    /// Every message of the fuzzing corpus (`Fuzz/corpus/message`: what fuzzing runs found, merged) that the
    /// parser accepts, the schema accepts too (`scripts/check-schema.py --must-accept`, python3-jsonschema).
    func testEveryCorpusMessageTheParserAcceptsTheSchemaAcceptsToo() throws {
        let root = examples.deletingLastPathComponent().deletingLastPathComponent()
        let corpus = root.appendingPathComponent("Fuzz/corpus/message")
        let inputs = try FileManager.default.contentsOfDirectory(at: corpus, includingPropertiesForKeys: nil).sorted { $0.path < $1.path }
        XCTAssertGreaterThan(inputs.count, 100)
        let accepted = try inputs.filter { if case .valid = try parse($0) { return true } else { return false } }
        XCTAssertGreaterThan(accepted.count, 10, "the corpus holds messages the worker sends")
        let listing = FileManager.default.temporaryDirectory.appendingPathComponent("schema-accepted-\(UUID().uuidString)")
        try accepted.map(\.path).joined(separator: "\n").write(to: listing, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: listing) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", root.appendingPathComponent("scripts/check-schema.py").path, "--must-accept", listing.path]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, text)
        XCTAssertTrue(text.contains("\(accepted.count) passed, 0 failed"), text)
    }

    func testEveryInvalidExampleIsADeadLetter() throws {
        let invalid = try files("invalid")
        XCTAssertGreaterThanOrEqual(invalid.count, 12)
        for file in invalid {
            if case .valid = try parse(file) { XCTFail("\(file.lastPathComponent) was accepted") }
        }
    }
}
